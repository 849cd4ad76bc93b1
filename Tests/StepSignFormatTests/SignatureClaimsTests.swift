import Foundation
import StepSignTestSupport
import StepSignFormat
import Testing

@Suite("SignatureClaims JSON")
struct SignatureClaimsTests {
    static func claims(payload: String = "pay 100 EUR to Bob", reason: String = "transfer") -> SignatureClaims {
        SignatureClaims(iss: "stepsign", sub: "alice", jti: "01890a5d-ac96-774b-bcce-b302099a8057", iat: 1_700_000_000,
                        payload: payload, payloadLength: payload.count, reason: reason,
                        authLevel: 1, authenticatorType: 0, authenticatorUsed: "password")
    }

    @Test("the hand-written JSON has the SPEC §2 claims in order")
    func memberOrder() {
        let json = String(decoding: Self.claims().jsonBytes, as: UTF8.self)
        #expect(json == #"{"iss":"stepsign","sub":"alice","jti":"01890a5d-ac96-774b-bcce-b302099a8057","iat":1700000000,"payload":"pay 100 EUR to Bob","payloadLength":18,"reason":"transfer","authLevel":1,"authenticatorType":0,"authenticatorUsed":"password"}"#)
    }

    @Test("strings with quotes, backslashes, control characters and non-ASCII round-trip through JSONDecoder",
          arguments: ["say \"hi\"", "C:\\path\\", "line\nbreak\ttab\r", "\u{0}\u{1}\u{1f}\u{7f}", "ünïcødé ✓ 👩‍👩‍👧", "</script>\u{2028}\u{2029}"])
    func escapingRoundTrips(text: String) throws {
        let claims = Self.claims(payload: text, reason: text)
        #expect(try JSONDecoder().decode(SignatureClaims.self, from: Data(claims.jsonBytes)) == claims)
    }

    @Test("Python's strict json parser reads the same claims")
    func pythonParsesTheJSON() throws {
        let claims = Self.claims(payload: "q\"b\\n\n\u{1}é👍", reason: "r")
        let script = """
            import sys, json
            c = json.loads(sys.stdin.buffer.read().decode("utf-8"), strict=True)
            print(json.dumps(c["payload"]))
            """
        let result = try Tools.run(["python3", "-c", script], stdin: String(decoding: claims.jsonBytes, as: UTF8.self))
        try #require(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == #""q\"b\\n\n\u0001\u00e9\ud83d\udc4d""# + "\n")
    }
}
