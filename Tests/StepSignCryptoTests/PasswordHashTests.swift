import Foundation
import StepSignTestSupport
import StepSignCrypto
import Testing

@Suite("PasswordHash")
struct PasswordHashTests {
    /// Cheap parameters so the suite stays fast; the format and code path are the same.
    static let fast = ScryptParameters(n: 1024, r: 8, p: 1)

    @Test("a hash is self-describing: $scrypt$ln=…,r=…,p=…$salt$hash")
    func formatIsSelfDescribing() throws {
        let encoded = try PasswordHash.make(password: "correct horse", parameters: Self.fast)
        let fields = encoded.split(separator: "$", omittingEmptySubsequences: false)
        #expect(fields.count == 5)
        #expect(fields[1] == "scrypt")
        #expect(fields[2] == "ln=10,r=8,p=1")
        #expect(Base64URL.decode(String(fields[3]))?.count == 16)
        #expect(Base64URL.decode(String(fields[4]))?.count == 32)
        #expect(try PasswordHash.parameters(of: encoded) == Self.fast)
    }

    @Test("the right password verifies")
    func rightPasswordVerifies() throws {
        let encoded = try PasswordHash.make(password: "Pässwörd-1", parameters: Self.fast)
        #expect(try PasswordHash.verify(password: "Pässwörd-1", encoded: encoded))
    }

    @Test("a wrong password does not verify")
    func wrongPasswordFails() throws {
        let encoded = try PasswordHash.make(password: "Secret-1", parameters: Self.fast)
        #expect(try !PasswordHash.verify(password: "Secret-2", encoded: encoded))
        #expect(try !PasswordHash.verify(password: "", encoded: encoded))
    }

    @Test("the same password gets a new salt every time")
    func saltsDiffer() throws {
        let a = try PasswordHash.make(password: "same", parameters: Self.fast)
        let b = try PasswordHash.make(password: "same", parameters: Self.fast)
        #expect(a != b)
    }

    @Test("passwords are not normalized: NFC and NFD spellings differ")
    func noUnicodeNormalization() throws {
        let nfc = "caf\u{e9}", nfd = "cafe\u{301}"
        let encoded = try PasswordHash.make(password: nfc, parameters: Self.fast)
        #expect(try PasswordHash.verify(password: nfc, encoded: encoded))
        #expect(try !PasswordHash.verify(password: nfd, encoded: encoded))
    }

    @Test("a hash made by Python hashlib.scrypt with the same inputs verifies")
    func matchesPythonScrypt() throws {
        let script = """
            import hashlib, base64
            salt = bytes(range(16))
            h = hashlib.scrypt(b"interop", salt=salt, n=1024, r=8, p=1, dklen=32)
            b = lambda x: base64.urlsafe_b64encode(x).rstrip(b"=").decode()
            print("$scrypt$ln=10,r=8,p=1$" + b(salt) + "$" + b(h))
            """
        let result = try Tools.python(script)
        try #require(result.status == 0, "\(result.stderr)")
        let encoded = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try PasswordHash.verify(password: "interop", encoded: encoded))
    }

    @Test("malformed stored strings throw", arguments: [
        "", "scrypt", "$scrypt$ln=10,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA",
        "$bcrypt$ln=10,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$r=8,ln=10,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=010,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=10,r=8,p=1$AAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=10,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAA",
        "$scrypt$ln=10,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    ])
    func malformedThrows(encoded: String) {
        #expect(throws: PasswordHashError.self) { try PasswordHash.verify(password: "x", encoded: encoded) }
    }

    @Test("parameters beyond the caps are refused before any work", arguments: [
        "$scrypt$ln=30,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=20,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=10,r=9999,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=10,r=8,p=999$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=0,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    ])
    func capsParameters(encoded: String) {
        #expect(throws: PasswordHashError.self) { try PasswordHash.verify(password: "x", encoded: encoded) }
    }

    @Test("the dummy hash is valid, uses the parameters given, and matches no password")
    func dummyHashCostsTheSame() throws {
        let dummy = try PasswordHash.dummy(parameters: Self.fast)
        #expect(try PasswordHash.parameters(of: dummy) == Self.fast)
        #expect(try !PasswordHash.verify(password: "", encoded: dummy))
        #expect(try !PasswordHash.verify(password: "password", encoded: dummy))
    }

    @Test("a dummy hash with parameters past the limits is an error, not a trap")
    func dummyHashOutOfRangeThrows() {
        // 128 · 2^19 · 8 = 512 MiB, twice Limits.maximumMemory.
        #expect(throws: PasswordHashError.self) {
            try PasswordHash.dummy(parameters: ScryptParameters(n: 1 << 19, r: 8, p: 1))
        }
        #expect(throws: PasswordHashError.self) {
            try PasswordHash.dummy(parameters: ScryptParameters(n: 1000, r: 8, p: 1))
        }
    }
}
