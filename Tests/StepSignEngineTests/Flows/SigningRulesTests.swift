@testable import StepSignEngine
import StepSignProtocol
import Testing

@Suite("Signing rules")
struct SigningRulesTests {
    @Test("the matrix knows (0,0), (1,0) and (4,1)")
    func matrixPairs() throws {
        #expect(try AuthenticationMatrix.requirement(level: 0, type: 0) == .none)
        #expect(try AuthenticationMatrix.requirement(level: 1, type: 0) == .strongestEnrolled)
        #expect(try AuthenticationMatrix.requirement(level: 4, type: 1) == .idvBiometric)
    }

    @Test("every other pair is 214", arguments: [(2, 0), (3, 0), (3, 1), (4, 0), (4, 2), (1, 1), (0, 1), (1, 4)])
    func matrixRefuses(level: Int, type: Int) {
        #expect(throws: StepSignError(.unsupportedAuthCombination,
                                      "authLevel \(level) with authenticatorType \(type) is not supported")) {
            try AuthenticationMatrix.requirement(level: level, type: type)
        }
    }

    @Test("payload length counts grapheme clusters, not bytes or scalars")
    func graphemes() throws {
        let family = "👨‍👩‍👧‍👦"
        try SigningRequest.validate(text: String(repeating: family, count: 500), name: "payload", limit: 500)
        #expect(throws: StepSignError.self) {
            try SigningRequest.validate(text: String(repeating: family, count: 501), name: "payload", limit: 500)
        }
    }

    @Test("the character count is String.count, for ASCII and for everything else",
          arguments: ["", "a", "abc", "a\r\nb", "\r\n\r\n", "\n\r", "\r\r\n", "tab\tand\u{7F}del", "é", "e\u{301}x",
                      "👨‍👩‍👧‍👦 family", "🇫🇷🇩🇪", "a\r\né\r\n", "\u{0}\u{1F}",
                      "a line longer than eight bytes", "0123456789abcdef\r\n", "01234567\r\n89abcdef\r\n\r\n",
                      "0123456789abcdefé", "0123456\r\n"])
    func characterCount(text: String) {
        #expect(SigningRequest.characterCount(text) == text.count)
    }

    @Test("the ASCII shortcuts agree with the Unicode rules",
          arguments: ["", " ", "\t\n\u{0B}\u{0C}\r ", "a", " a ", "\u{1F}", "x\u{7F}", "tab\there", "\u{00A0}", "é ",
                      "\u{2028}", "\u{200E}x", "\u{3000}", "plain text, 42.",
                      "a longer line of plain text, no controls", "0123456789abcdef\u{7F}", "0123456789abcde\u{1F}x",
                      "01234567\t89abcdef", "0123456789abcdef\u{0}", "                 ", "0123456789abcdefghij\u{200E}",
                      "~~~~~~~~~~~~~~~~ ~", "ab\u{7F}defghij", "\u{7E}\u{7E}\u{7E}\u{7E}\u{7E}\u{7E}\u{7E}\u{7E}\u{7F}"])
    func asciiShortcuts(text: String) {
        #expect(SigningRequest.isBlank(text) == !text.contains { !$0.isWhitespace })
        #expect(SigningRequest.hasHiddenCharacters(text) == text.unicodeScalars.contains(where: SigningRequest.isHidden))
    }

    @Test("blank text is refused", arguments: [" ", "\t\n", "\u{00A0}", "\u{3000}"])
    func blank(text: String) {
        #expect(throws: StepSignError.self) { try SigningRequest.validate(text: text, name: "reason", limit: 100) }
    }

    @Test("user IDs refuse whitespace, control characters and overlong names", arguments: ["", "a b", "a\u{0}", "a\nb", String(repeating: "u", count: 65)])
    func userNames(name: String) {
        #expect(throws: StepSignError.self) { try UserName.validate(name) }
    }
}
