import Foundation
import StepSignClient
import StepSignCrypto
import StepSignFormat
import Testing

/// (4,1): the IDV server's biometric assertion (SPEC §3.2 `setIDVBiometricAssertion`,
/// docs/flows.md "Strong authenticators / IDV server biometric (4,1)").
@Suite("IDV biometric (4,1)", .blocking)
struct IDVBiometricTests {
    /// A daemon that trusts `idv` through its keys file in `format`, with alice added.
    private func startDaemon(_ idv: TestIDVServer, _ format: TestIDVServer.KeysFormat = .pem,
                        extra: String = "") throws -> DaemonHarness {
        let daemon = try DaemonHarness(config: idv.config(format) + "\n" + extra, start: false)
        try daemon.start()
        try daemon.addUser()
        return daemon
    }

    @Test("idv.issuer empty (the default): (4,1) is error 170 with no events")
    func notConfigured() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let reply = try daemon.connect().requestIDV()
        #expect(reply.code == 170)
        #expect(reply.events.isEmpty)
    }

    @Test("(4,1) asks getIDVBiometric: user, mode 12, a nonce, attempts, status 100; nonces differ")
    func challenge() throws {
        let idv = try TestIDVServer()
        let daemon = try startDaemon(idv)
        let reply = try daemon.connect().requestIDV()
        #expect(reply.code == 0, "\(reply.message)")
        #expect(reply.eventNames == ["getIDVBiometric"])
        #expect(reply.string("user", of: "getIDVBiometric") == "alice")
        #expect(reply.int("challengeMode", of: "getIDVBiometric") == 12)
        #expect(reply.int("attemptsLeft", of: "getIDVBiometric") == 3)
        #expect(reply.statusCode(of: "getIDVBiometric") == 100)
        let nonce = try #require(reply.idvNonce)
        #expect(nonce.count >= 22)
        #expect(try daemon.connect().requestIDV().idvNonce != nonce)
    }

    @Test("a good assertion signs with authLevel 4 and authenticatorUsed idv-biometric; it verifies offline",
          arguments: TestIDVServer.KeysFormat.allCases)
    func goodAssertion(format: TestIDVServer.KeysFormat) throws {
        let idv = try TestIDVServer()
        let daemon = try startDaemon(idv, format)
        let connection = try daemon.connect()
        let challenge = try connection.requestIDV(payload: "wire 5000 EUR to carol", reason: "high-value transfer")
        let operation = try #require(challenge.idvChallenge)
        // From the JWKS the key is also found by its own kid.
        let header: [String: Any] = format == .jwks ? ["alg": "ES256", "kid": idv.jwksKid] : ["alg": "ES256"]
        let reply = try connection.setIDVAssertion(try idv.assertion(for: operation, header: header))
        #expect(reply.code == 0, "\(reply.message)")
        #expect(reply.eventNames == ["onAuthenticateUserAndSignData"])
        #expect(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        let details = try #require(reply.signingDetails)
        #expect(details["authLevel"]?.int == 4)
        #expect(details["authenticatorType"]?.int == 1)
        #expect(details["authenticatorUsed"]?.stringValue == "idv-biometric")
        let claims = try StepSignSignature.verify(try #require(details["payloadSignature"]?.stringValue),
                                                  trustedKeys: try connection.trustedKeys())
        #expect(claims.sub == "alice")
        #expect(claims.authLevel == 4)
        #expect(claims.authenticatorUsed == "idv-biometric")
        #expect(claims.payload == "wire 5000 EUR to carol")
    }

    @Test("the header kid may be the key's thumbprint, from a PEM file or a JWKS", arguments: TestIDVServer.KeysFormat.allCases)
    func thumbprintKid(format: TestIDVServer.KeysFormat) throws {
        let idv = try TestIDVServer()
        let daemon = try startDaemon(idv, format)
        let connection = try daemon.connect()
        let operation = try #require(try connection.requestIDV().idvChallenge)
        let reply = try connection.setIDVAssertion(try idv.assertion(for: operation,
                                                                     header: ["alg": "ES256", "kid": idv.key.publicKey.thumbprint]))
        #expect(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100)
    }

    /// The ways an assertion is refused; each gets 102 and a new nonce.
    enum Refusal: String, CaseIterable, CustomStringConvertible, Sendable {
        case wrongKey = "signed by another key"
        case unknownKid = "a kid the keys file does not name"
        case wrongIssuer = "another issuer"
        case wrongSubject = "another subject"
        case subjectTwice = "sub named twice, another subject first and the user last"
        case wrongNonce = "another nonce"
        case nonceOfOtherSession = "the nonce of another session's challenge"
        case expired = "exp more than 60 s in the past"
        case notYetValid = "iat more than 60 s in the future"
        case tooOld = "iat older than max_age_seconds + 60"
        case missingIat = "no iat"
        case missingExp = "no exp"
        case stringTimes = "iat and exp as strings"
        case algNone = "alg none"
        case hs256WithPEM = "HS256 keyed with the public key PEM"
        case noMatch = "result no-match"
        case missingResult = "no result"
        case truncatedSignature = "truncated signature"
        case paddedSignature = "signature with = padding"
        case alteredSignature = "one signature character changed"
        case derSignature = "DER signature"
        case crit = "crit header"
        case twoParts = "only two parts"
        case notJSON = "claims not JSON"
        case missingTxn = "no txn (not bound to the operation)"
        case txnOfNonce = "txn over the nonce alone"
        var description: String { rawValue }
    }

    @Test("a refused assertion answers getIDVBiometric with 102, attemptsLeft 2 and a new nonce",
          arguments: Refusal.allCases)
    func refused(_ refusal: Refusal) throws {
        let idv = try TestIDVServer()
        let daemon = try startDaemon(idv)
        let connection = try daemon.connect()
        let challenge = try connection.requestIDV()
        let operation = try #require(challenge.idvChallenge)
        let nonce = operation.nonce
        let now = Int(Date().timeIntervalSince1970)
        let good = TestIDVServer.goodClaims(user: "alice", nonce: nonce)
        func part(_ jws: String, _ index: Int) -> String {
            jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)[index]
        }
        let assertion: String
        switch refusal {
        case .wrongKey: assertion = try idv.assertion(for: operation, signer: try P256PrivateKey.generate())
        case .unknownKid: assertion = try idv.assertion(for: operation, header: ["alg": "ES256", "kid": "not-a-known-kid"])
        case .wrongIssuer: assertion = try idv.assertion(for: operation, changes: ["iss": "https://evil.test"])
        case .wrongSubject:
            try daemon.addUser("bob", password: Passwords.second)
            assertion = try idv.assertion(for: operation, changes: ["sub": "bob"])
        case .subjectTwice:
            // A lenient parser keeps one copy (often the last); the daemon's refuses both.
            try daemon.addUser("bob", password: Passwords.second)
            let claims = String(decoding: try #require(Base64URL.decode(part(try idv.assertion(for: operation), 1))), as: UTF8.self)
            assertion = try JWS.signES256(headerJSON: Array(#"{"alg":"ES256"}"#.utf8),
                                          payload: Array(("{\"sub\":\"bob\"," + claims.dropFirst()).utf8), key: idv.key)
        case .wrongNonce:
            assertion = try idv.assertion(for: operation, changes: ["nonce": Base64URL.encode(try SecureRandom.bytes(count: 16))])
        case .nonceOfOtherSession:
            assertion = try idv.assertion(for: try #require(try daemon.connect().requestIDV().idvChallenge))
        case .expired: assertion = try idv.assertion(for: operation, changes: ["iat": now - 200, "exp": now - 90])
        case .notYetValid: assertion = try idv.assertion(for: operation, changes: ["iat": now + 90, "exp": now + 300])
        case .tooOld:
            assertion = try idv.assertion(for: operation, changes: ["iat": now - TestIDVServer.maxAgeSeconds - 90, "exp": now + 60])
        case .missingIat: assertion = try idv.assertion(for: operation, changes: ["iat": NSNull()])
        case .missingExp: assertion = try idv.assertion(for: operation, changes: ["exp": NSNull()])
        case .stringTimes: assertion = try idv.assertion(for: operation, changes: ["iat": String(now), "exp": String(now + 60)])
        case .algNone: assertion = try TestIDVServer.unsecured(claims: good)
        case .hs256WithPEM:
            assertion = try TestIDVServer.hs256(claims: good, secret: Array(idv.key.publicKey.spkiPEM.utf8))
        case .noMatch: assertion = try idv.assertion(for: operation, changes: ["result": "no-match"])
        case .missingResult: assertion = try idv.assertion(for: operation, changes: ["result": NSNull()])
        case .truncatedSignature: assertion = String(try idv.assertion(for: operation).dropLast(4))
        case .paddedSignature: assertion = try idv.assertion(for: operation) + "=="
        case .alteredSignature:
            let jws = try idv.assertion(for: operation)
            let last = jws.last!
            // The last of 86 characters carries 2 bits; changing one of them changes the bytes.
            assertion = String(jws.dropLast()) + (last == "A" ? "Q" : "A")
        case .derSignature:
            let jws = try idv.assertion(for: operation)
            let der = try ECDSASignature.derFromRaw(try #require(Base64URL.decode(part(jws, 2))))
            assertion = part(jws, 0) + "." + part(jws, 1) + "." + Base64URL.encode(der)
        case .crit:
            assertion = try idv.assertion(for: operation, header: ["alg": "ES256", "crit": ["exp"], "exp": now + 60])
        case .twoParts:
            let jws = try idv.assertion(for: operation)
            assertion = part(jws, 0) + "." + part(jws, 1)
        case .notJSON:
            assertion = try JWS.signES256(headerJSON: Array(#"{"alg":"ES256"}"#.utf8), payload: Array("match".utf8), key: idv.key)
        case .missingTxn: assertion = try idv.assertion(for: operation, changes: ["txn": NSNull()])
        case .txnOfNonce: assertion = try idv.assertion(for: operation, changes: ["txn": IDVOperation.txn(of: Array(nonce.utf8))])
        }
        let reply = try connection.setIDVAssertion(assertion)
        try expectRetry(reply, after: challenge, attemptsLeft: 2)
        // The same session can still succeed with a good assertion for the new nonce.
        let fresh = try connection.setIDVAssertion(try idv.assertion(for: try #require(reply.idvChallenge)))
        #expect(fresh.statusCode(of: "onAuthenticateUserAndSignData") == 100)
    }

    @Test("claims at the edges of the clock skew are accepted (exp 30 s ago, iat 30 s ahead, iat max_age + 30 s ago)",
          arguments: ["exp 30 s ago", "iat 30 s ahead", "iat max_age + 30 s ago"])
    func withinSkew(edge: String) throws {
        let idv = try TestIDVServer()
        let daemon = try startDaemon(idv)
        let connection = try daemon.connect()
        let operation = try #require(try connection.requestIDV().idvChallenge)
        let now = Int(Date().timeIntervalSince1970)
        let changes: [String: Any] = switch edge {
        case "exp 30 s ago": ["iat": now - 100, "exp": now - 30]
        case "iat 30 s ahead": ["iat": now + 30, "exp": now + 200]
        default: ["iat": now - TestIDVServer.maxAgeSeconds - 30, "exp": now + 60]
        }
        let reply = try connection.setIDVAssertion(try idv.assertion(for: operation, changes: changes))
        #expect(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100, "\(reply.shape)")
    }

    @Test("an assertion is accepted once: replayed in a new signing it is refused with 102")
    func replayed() throws {
        let idv = try TestIDVServer()
        let daemon = try startDaemon(idv)
        let connection = try daemon.connect()
        let operation = try #require(try connection.requestIDV().idvChallenge)
        let assertion = try idv.assertion(for: operation)
        #expect(try connection.setIDVAssertion(assertion).statusCode(of: "onAuthenticateUserAndSignData") == 100)
        let again = try connection.requestIDV()
        let replay = try connection.setIDVAssertion(assertion)
        try expectRetry(replay, after: again, attemptsLeft: 2)
    }

    /// The twin carries the accepted assertion's nonce, which no later challenge has (and which
    /// is marked used): the nonce binding refuses it here before the assertion's own
    /// single-use mark is looked at. That the mark is the same for an assertion and its twin
    /// (so the twin is a second use even where the nonce would match) is shown on the verifier,
    /// in IDVAssertionSingleUseTests. The daemon has no rule against high-S assertions as such:
    /// the IDV server's key made both forms (RFC 7518 accepts both).
    @Test("the high-S twin (r, n−s) of an accepted assertion's signature is refused with 102")
    func highSTwinOfAcceptedAssertion() throws {
        let idv = try TestIDVServer()
        let daemon = try startDaemon(idv)
        let connection = try daemon.connect()
        let operation = try #require(try connection.requestIDV().idvChallenge)
        let assertion = try idv.assertion(for: operation)
        #expect(try connection.setIDVAssertion(assertion).statusCode(of: "onAuthenticateUserAndSignData") == 100)
        let again = try connection.requestIDV()
        let twin = SignatureMalleability.twin(of: assertion)
        #expect(twin != assertion)
        try expectRetry(try connection.setIDVAssertion(twin), after: again, attemptsLeft: 2)
    }

    @Test("an assertion accepted in one session is refused in another session's signing")
    func replayedAcrossSessions() throws {
        let idv = try TestIDVServer()
        let daemon = try startDaemon(idv)
        let first = try daemon.connect()
        let operation = try #require(try first.requestIDV().idvChallenge)
        let assertion = try idv.assertion(for: operation)
        #expect(try first.setIDVAssertion(assertion).statusCode(of: "onAuthenticateUserAndSignData") == 100)
        let second = try daemon.connect()
        let challenge = try second.requestIDV()
        try expectRetry(try second.setIDVAssertion(assertion), after: challenge, attemptsLeft: 2)
    }

    @Test("three refused assertions: 102, 102, then 153 with an empty signature; the user is blocked")
    func exhaustedBlocks() throws {
        let idv = try TestIDVServer()
        let daemon = try startDaemon(idv)
        let connection = try daemon.connect()
        var reply = try connection.requestIDV()
        var operations = [try #require(reply.idvChallenge)]
        for left in [2, 1] {
            let next = try connection.setIDVAssertion(try idv.assertion(for: operations.last!, changes: ["result": "no-match"]))
            try expectRetry(next, after: reply, attemptsLeft: left)
            operations.append(try #require(next.idvChallenge))
            reply = next
        }
        #expect(Set(operations.map(\.nonce)).count == 3)
        let last = try connection.setIDVAssertion(try idv.assertion(for: operations.last!, changes: ["result": "no-match"]))
        #expect(last.eventNames == ["onAuthenticateUserAndSignData"])
        #expect(last.statusCode(of: "onAuthenticateUserAndSignData") == 153)
        #expect(last.signingDetails?["payloadSignature"]?.stringValue == "")
        #expect(try daemon.userRow()?["blocked"]?.boolValue == true)
        #expect(try connection.requestIDV().code == 148)
        #expect(try connection.setIDVAssertion("x.y.z").code == 11)
    }

    @Test("max_attempts = 5 gives five assertions before 153")
    func maxAttemptsConfigured() throws {
        let idv = try TestIDVServer()
        let daemon = try startDaemon(idv, extra: "[password]\nmax_attempts = 5")
        let connection = try daemon.connect()
        var reply = try connection.requestIDV()
        #expect(reply.int("attemptsLeft", of: "getIDVBiometric") == 5)
        for left in [4, 3, 2, 1] {
            let next = try connection.setIDVAssertion("garbage")
            try expectRetry(next, after: reply, attemptsLeft: left)
            reply = next
        }
        #expect(try connection.setIDVAssertion("garbage").statusCode(of: "onAuthenticateUserAndSignData") == 153)
    }

    @Test("setIDVBiometricAssertion with no IDV challenge open is error 11; during a password challenge too")
    func noChallengeOpen() throws {
        let idv = try TestIDVServer()
        let daemon = try startDaemon(idv)
        let connection = try daemon.connect()
        #expect(try connection.setIDVAssertion(try idv.assertion(nonce: "x")).code == 11)
        #expect(try connection.requestLevel1().eventNames == ["getPassword"])
        #expect(try connection.setIDVAssertion(try idv.assertion(nonce: "x")).code == 11)
        #expect(try connection.setPassword(Passwords.initial, mode: 12).statusCode(of: "onAuthenticateUserAndSignData") == 100)
    }

    @Test("a password cannot answer the IDV challenge (setPassword mode 12 is error 11)")
    func noPasswordFallback() throws {
        let idv = try TestIDVServer()
        let daemon = try startDaemon(idv)
        let connection = try daemon.connect()
        let challenge = try connection.requestIDV()
        #expect(try connection.setPassword(Passwords.initial, mode: 12).code == 11)
        let reply = try connection.setIDVAssertion(try idv.assertion(for: try #require(challenge.idvChallenge)))
        #expect(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100)
    }

    // MARK: Helpers

    /// `reply` is a `getIDVBiometric` retry: mode 12, status 102, `attemptsLeft`, a new nonce.
    private func expectRetry(_ reply: ClientReply, after previous: ClientReply, attemptsLeft: Int,
                             sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(reply.code == 0, "\(reply.message)", sourceLocation: sourceLocation)
        try #require(reply.eventNames == ["getIDVBiometric"], "\(reply.shape)", sourceLocation: sourceLocation)
        #expect(reply.int("challengeMode", of: "getIDVBiometric") == 12, sourceLocation: sourceLocation)
        #expect(reply.statusCode(of: "getIDVBiometric") == 102, sourceLocation: sourceLocation)
        #expect(reply.int("attemptsLeft", of: "getIDVBiometric") == attemptsLeft, sourceLocation: sourceLocation)
        let nonce = try #require(reply.idvNonce, sourceLocation: sourceLocation)
        #expect(nonce != previous.idvNonce, "a new nonce each time", sourceLocation: sourceLocation)
    }
}

/// Who may get a level-4 signature: the IDV server vouches for a face, stepsign's user table
/// for who may sign (blocked and removed users may not; SPEC §3.2, §4).
@Suite("IDV biometric (4,1): the user's state", .blocking)
struct IDVUserStateTests {
    private func startDaemon(_ idv: TestIDVServer) throws -> DaemonHarness {
        let daemon = try DaemonHarness(config: idv.config(.pem), start: false)
        try daemon.start()
        try daemon.addUser()
        return daemon
    }

    @Test("a user blocked (by another session) between challenge and a good assertion is not signed for: 153, as with a password")
    func blockedMeanwhile() throws {
        let idv = try TestIDVServer()
        let daemon = try startDaemon(idv)
        let connection = try daemon.connect()
        let operation = try #require(try connection.requestIDV().idvChallenge)
        try BlockUser.byWrongLogins(daemon)
        let reply = try connection.setIDVAssertion(try idv.assertion(for: operation))
        #expect(reply.statusCode(of: "onAuthenticateUserAndSignData") == 153, "\(reply.shape)")
        #expect(reply.signingDetails?["payloadSignature"]?.stringValue ?? "" == "")
        #expect(try daemon.connect().call("status").result?["signatures"]?.int == 0)
    }

    @Test("a user removed between challenge and a good assertion is not signed for")
    func removedMeanwhile() throws {
        let idv = try TestIDVServer()
        let daemon = try startDaemon(idv)
        let connection = try daemon.connect()
        let operation = try #require(try connection.requestIDV().idvChallenge)
        #expect(try daemon.connect().call("admin.removeUser", ["user": "alice"]).code == 0)
        let reply = try connection.setIDVAssertion(try idv.assertion(for: operation))
        #expect(reply.statusCode(of: "onAuthenticateUserAndSignData") != 100, "\(reply.shape)")
        #expect(reply.signingDetails?["payloadSignature"]?.stringValue ?? "" == "")
        #expect(try daemon.connect().call("status").result?["signatures"]?.int == 0)
    }

    @Test("a name that is not a stepsign user is not signed for, even with a good assertion (as with a password: 102)")
    func unknownUser() throws {
        let idv = try TestIDVServer()
        let daemon = try startDaemon(idv)
        let connection = try daemon.connect()
        let challenge = try connection.requestIDV(user: "mallory")
        let reply = try connection.setIDVAssertion(try idv.assertion(for: try #require(challenge.idvChallenge)))
        #expect(reply.statusCode(of: "onAuthenticateUserAndSignData") != 100, "\(reply.shape)")
        #expect(reply.signingDetails?["payloadSignature"]?.stringValue ?? "" == "")
        #expect(try daemon.connect().call("status").result?["signatures"]?.int == 0)
    }
}

enum BlockUser {
    /// Blocks alice on another connection with wrong mode-0 passwords (the stored counter).
    static func byWrongLogins(_ daemon: DaemonHarness, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let other = try daemon.connect()
        _ = try other.setUser()
        for _ in 0..<3 { _ = try other.setPassword(Passwords.wrong, mode: 0) }
        try #require(try daemon.userRow()?["blocked"]?.boolValue == true, sourceLocation: sourceLocation)
    }
}
