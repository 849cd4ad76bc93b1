@testable import StepSignEngine
import StepSignProtocol
import Testing

/// SPEC §3 "User IDs": 1–64 characters, no control characters, no Unicode format characters
/// (category Cf), not blank; else error 4.
@Suite("User IDs")
struct UserNameTests {
    @Test("names with a format character (Cf) are refused", arguments: [
        "ali\u{200B}ce", "alice\u{202E}gpj.exe", "\u{2067}admin\u{2069}", "al\u{00AD}ice", "\u{FEFF}alice",
        "a\u{200D}b", "a\u{2060}b", "a\u{061C}b", "a\u{E0001}b",
    ])
    func formatCharacters(name: String) {
        #expect(throws: StepSignError.self) { try UserName.validate(name) }
        do { try UserName.validate(name) } catch { #expect(error.code == .invalidArguments) }
    }

    @Test("empty, blank, control characters and more than 64 characters are refused", arguments: [
        "", " ", "\t", "al ice", "al\u{0007}ice", "al\u{007F}ice", "al\u{0085}ice", "\u{3000}", String(repeating: "u", count: 65),
    ])
    func otherRefusals(name: String) {
        #expect(throws: StepSignError.self) { try UserName.validate(name) }
    }

    @Test("every ASCII character is refused exactly when the Unicode rule refuses it, and counts as one character")
    func asciiAgreesWithTheUnicodeRule() throws {
        for value in UInt8(0)..<0x80 {
            let scalar = Unicode.Scalar(value)
            let name = "a\(Character(scalar))b"
            if UserName.isRefused(scalar) {
                #expect(throws: StepSignError.self, "0x\(String(value, radix: 16))") { try UserName.validate(name) }
            } else {
                try UserName.validate(name)
                try UserName.validate(name, new: true)
            }
        }
        // "\r\n" is one character: 65 bytes, 64 characters, refused for its controls, not its length.
        do {
            try UserName.validate(String(repeating: "u", count: 63) + "\r\n")
            Issue.record("a name with a line break was accepted")
        } catch {
            #expect(error.message.contains("whitespace, control or format"))
        }
        #expect(throws: StepSignError.self) { try UserName.validate(String(repeating: "u", count: 64) + "\r\n") }
    }

    @Test("ordinary names pass", arguments: [
        "alice", "Émilie", "佐藤", "ops.bot-7@example", "😀dev", String(repeating: "u", count: 64),
    ])
    func ordinary(name: String) throws {
        try UserName.validate(name)
    }
}
