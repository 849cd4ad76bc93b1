/// A validated `authenticateUserAndSignData` request.
struct SigningRequest: Sendable {
    var user: String
    var payload: String
    var reason: String
    var authLevel: Int
    var authenticatorType: Int

    /// Longest payload, in characters (extended grapheme clusters, as Swift counts them).
    static let payloadLimit = 500
    /// Longest reason, in characters.
    static let reasonLimit = 100

    /// Checks payload and reason as SPEC §3.2 sets them: 1–500 and 1–100 characters, not blank.
    /// The reason must also be one line (it is a line of the LDA challenge text).
    static func validate(text: String, name: String, limit: Int, singleLine: Bool = false) throws(StepSignError) {
        let count = characterCount(text)
        guard count >= 1 else { throw .invalid("\"\(name)\" must not be empty") }
        guard count <= limit else { throw .invalid("\"\(name)\" must be at most \(limit) characters, got \(count)") }
        guard !isBlank(text) else { throw .invalid("\"\(name)\" must not be blank") }
        if singleLine, hasHiddenCharacters(text) {
            throw .invalid("\"\(name)\" must be one line without control or format characters")
        }
    }

    /// `text.count` (extended grapheme clusters), without grapheme breaking when `text` is
    /// ASCII: there, every scalar is one character except that `"\r\n"` is one.
    static func characterCount(_ text: String) -> Int {
        let ascii = text.utf8.withContiguousStorageIfAvailable { bytes -> Int? in
            var pairs = 0
            var previous: UInt8 = 0
            for byte in bytes {
                guard byte < 0x80 else { return nil }
                if byte == 0x0A, previous == 0x0D { pairs += 1 }
                previous = byte
            }
            return bytes.count - pairs
        }
        return (ascii ?? nil) ?? text.count
    }

    /// Whether `text` is only whitespace (`Character.isWhitespace`). ASCII text is checked
    /// byte by byte (its whitespace is tab through carriage return, and space).
    static func isBlank(_ text: String) -> Bool {
        let ascii = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool? in
            var blank = true
            for byte in bytes {
                guard byte < 0x80 else { return nil }
                if byte != 0x20, !(0x09...0x0D).contains(byte) { blank = false }
            }
            return blank
        }
        return (ascii ?? nil) ?? !text.contains { !$0.isWhitespace }
    }

    /// Whether `text` has a scalar `isHidden` refuses. In ASCII those are the controls
    /// (below 0x20, and 0x7F).
    static func hasHiddenCharacters(_ text: String) -> Bool {
        let ascii = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool? in
            var hidden = false
            for byte in bytes {
                guard byte < 0x80 else { return nil }
                if byte < 0x20 || byte == 0x7F { hidden = true }
            }
            return hidden
        }
        return (ascii ?? nil) ?? text.unicodeScalars.contains(where: isHidden)
    }

    /// Characters that break a line or change how a line displays (controls, line and
    /// paragraph separators, bidi and other format characters): not allowed in text a device shows.
    static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }

    func details(signature: String = "", signatureID: String = "", authenticatorUsed: String) -> SigningDetails {
        SigningDetails(
            dataPayload: payload, dataPayloadLength: Self.characterCount(payload), reason: reason,
            payloadSignature: signature, dataSignatureID: signatureID,
            authLevel: authLevel, authenticatorType: authenticatorType, authenticatorUsed: authenticatorUsed
        )
    }
}
