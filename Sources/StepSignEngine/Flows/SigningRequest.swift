#if canImport(Glibc)
import Glibc
#endif
import StepSignConfig
import StepSignFormat
import StepSignProtocol
import StepSignStorage

/// A validated `authenticateUserAndSignData` request.
struct SigningRequest: Sendable {
    var user: String
    var payload: String
    /// The payload's length in characters, counted once by ``validate(text:name:limit:singleLine:)``.
    var payloadLength: Int
    var reason: String
    var authLevel: Int
    var authenticatorType: Int
    /// The `[[approval]]` rule whose approvals it waits for once its requester stepped up
    /// (SPEC §3.4); nil when none matches.
    var approvalRule: StepSignConfiguration.ApprovalRule? = nil
    /// Its claim of an `idempotencyKey` (SPEC §3): it signs under the claim's signature ID and
    /// marks the claim done, or gives it up when it ends unsigned. Nil without a key.
    var idempotency: IdempotencyClaim? = nil
    /// Set for the signature of `unlockAgent` (SPEC §3.5): once signed, it opens the peer
    /// uid's SSH agent window for this many seconds and uses.
    var agentUnlock: (seconds: Int, maxUses: Int)? = nil
    /// The SSHSIG data of an agent signature (SPEC §3.5), its `ssh` claim.
    var ssh: SSHClaim? = nil

    /// Longest payload, in characters (extended grapheme clusters, as Swift counts them).
    static let payloadLimit = 500
    /// Longest reason, in characters.
    static let reasonLimit = 100

    /// Checks payload and reason as SPEC §3.2 sets them: 1–500 and 1–100 characters, not blank.
    /// The reason must also be one line (it is a line of the LDA challenge text). Returns the
    /// text's length in characters.
    @discardableResult
    static func validate(text: String, name: String, limit: Int, singleLine: Bool = false) throws(StepSignError) -> Int {
        let count = characterCount(text)
        guard count >= 1 else { throw .invalid("\"\(name)\" must not be empty") }
        guard count <= limit else { throw .invalid("\"\(name)\" must be at most \(limit) characters, got \(count)") }
        guard !isBlank(text) else { throw .invalid("\"\(name)\" must not be blank") }
        if singleLine, hasHiddenCharacters(text) {
            throw .invalid("\"\(name)\" must be one line without control or format characters")
        }
        return count
    }

    /// `text.count` (extended grapheme clusters), without grapheme breaking when `text` is
    /// ASCII: there, every scalar is one character except that `"\r\n"` is one.
    static func characterCount(_ text: String) -> Int {
        withASCIIBytes(of: text) { bytes in
            // Most text has no carriage return at all: one `memchr` says so.
            guard let base = bytes.baseAddress, memchr(base, 0x0D, bytes.count) != nil else { return bytes.count }
            var pairs = 0
            for index in bytes.indices.dropFirst() where bytes[index] == 0x0A && bytes[index - 1] == 0x0D {
                pairs += 1
            }
            return bytes.count - pairs
        } ?? text.count
    }

    /// Whether `text` is only whitespace (`Character.isWhitespace`). In ASCII that is tab
    /// through carriage return, and space.
    static func isBlank(_ text: String) -> Bool {
        withASCIIBytes(of: text) { bytes in
            bytes.allSatisfy { $0 == 0x20 || (0x09...0x0D).contains($0) }
        } ?? !text.contains { !$0.isWhitespace }
    }

    /// Whether `text` has a scalar `isHidden` refuses. In ASCII those are the controls
    /// (below 0x20, and 0x7F).
    static func hasHiddenCharacters(_ text: String) -> Bool {
        withASCIIBytes(of: text) { bytes in
            var index = 0
            if let base = bytes.baseAddress {
                // Eight bytes at a time (all below 0x80 here): one below 0x20, or DEL.
                let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
                while index + 8 <= bytes.count {
                    let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                    let del = word ^ (ones &* 0x7F)
                    if ((word &- ones &* 0x20) & ~word & highs) | ((del &- ones) & ~del & highs) != 0 { return true }
                    index += 8
                }
            }
            return bytes[index...].contains { $0 < 0x20 || $0 == 0x7F }
        } ?? text.unicodeScalars.contains(where: isHidden)
    }

    /// `body` over `text`'s UTF-8 when it is contiguous and all ASCII, else nil: the shortcut
    /// the three checks above take before the Unicode rules.
    private static func withASCIIBytes<T>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T? {
        let result = text.utf8.withContiguousStorageIfAvailable { bytes -> T? in
            isASCII(bytes) ? body(bytes) : nil
        }
        return result ?? nil
    }

    /// Whether every byte is below 0x80, eight at a time (issue 43: a byte at a time was most
    /// of the request's checks).
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        if let base = bytes.baseAddress {
            while index + 8 <= bytes.count {
                if UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
                index += 8
            }
        }
        return bytes[index...].allSatisfy { $0 < 0x80 }
    }

    /// Characters that break a line or change how a line displays (controls, line and
    /// paragraph separators, bidi and other format characters): not allowed in text a device shows.
    static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }

    /// What its step-up approves: this payload and reason.
    var subject: StepUpSubject { StepUpSubject(user: user, operation: .payload(payload, reason: reason)) }

    func details(signature: String = "", signatureID: String = "", authenticatorUsed: String) -> SigningDetails {
        SigningDetails(
            dataPayload: payload, dataPayloadLength: payloadLength, reason: reason,
            payloadSignature: signature, dataSignatureID: signatureID,
            authLevel: authLevel, authenticatorType: authenticatorType, authenticatorUsed: authenticatorUsed
        )
    }
}
