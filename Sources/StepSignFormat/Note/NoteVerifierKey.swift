import StepSignCrypto

/// A key that may sign C2SP signed notes, as verifiers name it (`name+hex(key ID)+base64(type
/// ‖ public key)`, the encoding of golang.org/x/mod/sumdb/note and every C2SP tool): the log's
/// Ed25519 key (type 0x01), a daemon's P-256 key (type 0x02, as transparency-dev's witness
/// uses it) and witnesses' cosignature keys (type 0x04).
public struct NoteVerifierKey: Sendable, Equatable, CustomStringConvertible {
    /// The signature types of C2SP signed-note this code knows.
    public enum SignatureType: UInt8, Sendable {
        case ed25519 = 0x01
        case ecdsa = 0x02
        case cosignatureV1 = 0x04
    }

    public let name: String
    public let keyID: UInt32
    public let type: SignatureType
    /// The public key: 32 Ed25519 bytes, or a P-256 key's SPKI DER.
    public let publicKey: [UInt8]
    /// The key, parsed once (a verification does not parse it again).
    private let parsed: ParsedKey

    private enum ParsedKey: Sendable {
        case ed25519(Ed25519PublicKey)
        case p256(P256PublicKey)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.name == rhs.name && lhs.keyID == rhs.keyID && lhs.type == rhs.type && lhs.publicKey == rhs.publicKey
    }

    /// The verifier key of a log or witness Ed25519 key called `name`: key ID SHA-256(name ‖
    /// 0x0A ‖ type ‖ key)[:4] (C2SP signed-note's recommendation).
    public init(name: String, ed25519 key: Ed25519PublicKey, type: SignatureType = .ed25519) throws(NoteError) {
        try Self.checkName(name)
        self.name = name
        self.type = type
        self.publicKey = key.raw
        self.keyID = Self.keyID(SHA256.hash(Array(name.utf8) + [0x0a, type.rawValue] + key.raw))
        self.parsed = .ed25519(key)
    }

    /// The verifier key of a P-256 key called `name` (type 0x02): key ID SHA-256(SPKI DER)[:4].
    public init(name: String, p256 key: P256PublicKey) throws(NoteError) {
        try Self.checkName(name)
        guard let der = Self.spkiDER(key.spkiPEM) else { throw .malformed("the P-256 key has no SPKI DER") }
        self.name = name
        self.type = .ecdsa
        self.publicKey = der
        self.keyID = Self.keyID(SHA256.hash(der))
        self.parsed = .p256(key)
    }

    /// Reads `name+hex8+base64(type ‖ key)`.
    public init(_ text: String) throws(NoteError) {
        // The base64 may hold `+` itself: the name and the key ID end at the first two.
        let parts = text.split(separator: "+", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[1].utf8.count == 8, let id = UInt32(parts[1], radix: 16),
              parts[1].utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }),
              let blob = Base64.decode(parts[2]), let typeByte = blob.first,
              let type = SignatureType(rawValue: typeByte)
        else { throw .malformed("not a verifier key (name+hex key ID+base64 key)") }
        let name = String(parts[0])
        try Self.checkName(name)
        let key = Array(blob.dropFirst())
        let parsed: ParsedKey
        switch type {
        case .ed25519, .cosignatureV1:
            guard let ed = try? Ed25519PublicKey(raw: key) else { throw .malformed("not an Ed25519 public key") }
            let expected = try NoteVerifierKey(name: name, ed25519: ed, type: type)
            guard expected.keyID == id else { throw .malformed("the key ID does not match the key") }
            parsed = .ed25519(ed)
        case .ecdsa:
            guard let p256 = Self.p256(der: key) else { throw .malformed("not a P-256 public key") }
            guard Self.keyID(SHA256.hash(key)) == id else { throw .malformed("the key ID does not match the key") }
            parsed = .p256(p256)
        }
        self.name = name
        self.keyID = id
        self.type = type
        self.publicKey = key
        self.parsed = parsed
    }

    /// `name+hex8+base64(type ‖ key)`.
    public var description: String {
        name + "+" + Self.hex8(keyID) + "+" + Base64.encode([type.rawValue] + publicKey)
    }

    /// Whether `signature` (without its 4-byte key ID) is this key's over the note text `text`;
    /// for a witness's key (type 0x04), a ``Cosignature`` of it (a timestamp and the signature
    /// of another message).
    public func isValidSignature(_ signature: [UInt8], text: [UInt8]) -> Bool {
        switch (type, parsed) {
        case (.ed25519, .ed25519(let key)):
            return key.isValidSignature(signature, for: text)
        case (.cosignatureV1, .ed25519(let key)):
            guard let cosignature = try? Cosignature(bytes: signature) else { return false }
            return cosignature.isValid(text: text, key: key)
        case (.ecdsa, .p256(let key)):
            guard let raw = try? ECDSASignature.rawFromDER(signature) else { return false }
            return key.isValidSignatureES256(raw, for: text)
        default:
            return false
        }
    }

    // MARK: Helpers

    /// Key names are non-empty and contain no Unicode space or `+` (C2SP signed-note).
    static func checkName(_ name: String) throws(NoteError) {
        guard !name.isEmpty, !name.unicodeScalars.contains(where: { $0 == "+" || $0.properties.isWhitespace }),
              !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f })
        else { throw .malformed("a key name must be non-empty, without spaces or +: \"\(name)\"") }
    }

    static func keyID(_ digest: [UInt8]) -> UInt32 {
        digest.prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    static func hex8(_ id: UInt32) -> String {
        let hex = String(id, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }

    static func spkiDER(_ pem: String) -> [UInt8]? {
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return Base64.decode(body)
    }

    static func p256(der: [UInt8]) -> P256PublicKey? {
        var lines = ["-----BEGIN PUBLIC KEY-----"]
        let text = Base64.encode(der)
        var index = text.startIndex
        while index < text.endIndex {
            let end = text.index(index, offsetBy: 64, limitedBy: text.endIndex) ?? text.endIndex
            lines.append(String(text[index..<end]))
            index = end
        }
        lines.append("-----END PUBLIC KEY-----")
        return try? P256PublicKey(spkiPEM: lines.joined(separator: "\n") + "\n")
    }
}
