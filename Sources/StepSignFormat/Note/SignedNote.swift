import Foundation
import StepSignCrypto

/// A C2SP signed note: a text ending in a newline, a blank line, and one or more signature
/// lines `— <key name> base64(key ID ‖ signature)`. The log's checkpoints are such notes
/// (SPEC §5.5), signed by the daemon's keys and cosigned by witnesses (§5.6).
public struct SignedNote: Sendable, Equatable {
    /// One signature line.
    public struct Signature: Sendable, Equatable {
        public var name: String
        public var keyID: UInt32
        /// The signature proper, after the key ID.
        public var bytes: [UInt8]

        public init(name: String, keyID: UInt32, bytes: [UInt8]) {
            self.name = name
            self.keyID = keyID
            self.bytes = bytes
        }

        /// The line, without its newline: em dash, space, name, space, base64(key ID ‖ signature).
        public var line: String {
            let id = [UInt8(keyID >> 24 & 0xff), UInt8(keyID >> 16 & 0xff), UInt8(keyID >> 8 & 0xff), UInt8(keyID & 0xff)]
            return "\u{2014} " + name + " " + Base64.encode(id + bytes)
        }
    }

    /// The most signature lines a note may have here (C2SP: at least 16 must be accepted).
    public static let maxSignatures = 64
    /// The largest note read, in bytes.
    public static let maxSize = 64 * 1024

    /// The signed text, ending in a newline.
    public let text: String
    public private(set) var signatures: [Signature]

    /// A note of `text` (which must end in a newline, be UTF-8 without control characters
    /// other than newline) with `signatures`.
    public init(text: String, signatures: [Signature] = []) throws(NoteError) {
        try Self.checkText(text)
        self.text = text
        self.signatures = signatures
    }

    /// Reads a signed note: the text is what comes before the last blank line.
    public init(parsing note: String) throws(NoteError) {
        guard note.utf8.count <= Self.maxSize else { throw .malformed("the note is larger than \(Self.maxSize) bytes") }
        guard let split = note.range(of: "\n\n", options: .backwards) else {
            throw .malformed("no blank line before the signatures")
        }
        let text = String(note[..<split.lowerBound]) + "\n"
        try Self.checkText(text)
        let block = note[split.upperBound...]
        guard block.hasSuffix("\n") else { throw .malformed("the last signature line does not end in a newline") }
        var signatures: [Signature] = []
        for line in block.dropLast().split(separator: "\n", omittingEmptySubsequences: false) {
            guard line.hasPrefix("\u{2014} ") else { throw .malformed("a signature line must start with an em dash and a space") }
            let fields = line.dropFirst(2).split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 2 else { throw .malformed("a signature line is: em dash, name, signature") }
            let name = String(fields[0])
            try NoteVerifierKey.checkName(name)
            guard let blob = Base64.decode(fields[1]), blob.count > 4 else {
                throw .malformed("a signature is base64 of a key ID and a signature")
            }
            signatures.append(Signature(name: name, keyID: NoteVerifierKey.keyID(blob), bytes: Array(blob.dropFirst(4))))
            guard signatures.count <= Self.maxSignatures else { throw .malformed("more than \(Self.maxSignatures) signatures") }
        }
        guard !signatures.isEmpty else { throw .malformed("no signature") }
        self.text = text
        self.signatures = signatures
    }

    /// The note as text: the text, a blank line, a line per signature.
    public var serialized: String {
        text + "\n" + signatures.map { $0.line + "\n" }.joined()
    }

    /// Adds `signature`, replacing one of the same key (name and ID).
    public mutating func add(_ signature: Signature) {
        signatures.removeAll { $0.name == signature.name && $0.keyID == signature.keyID }
        signatures.append(signature)
    }

    /// Signs the text with the log's Ed25519 key named `name` (type 0x01).
    public mutating func sign(name: String, ed25519 key: Ed25519PrivateKey) throws -> Void {
        let verifier = try NoteVerifierKey(name: name, ed25519: key.publicKey)
        add(Signature(name: name, keyID: verifier.keyID, bytes: try key.signature(for: Array(text.utf8))))
    }

    /// Signs the text with a daemon's P-256 key named `name` (type 0x02: ECDSA with SHA-256 over
    /// the text, ASN.1 DER, low-S).
    public mutating func sign(name: String, p256 key: P256PrivateKey) throws -> Void {
        let verifier = try NoteVerifierKey(name: name, p256: key.publicKey)
        let der = try ECDSASignature.derFromRaw(try key.signatureES256(for: Array(text.utf8)))
        add(Signature(name: name, keyID: verifier.keyID, bytes: der))
    }

    /// Adds a witness's cosignature (C2SP tlog-cosignature v1) made with `key` at `timestamp`.
    public mutating func cosign(name: String, key: Ed25519PrivateKey, timestamp: UInt64) throws -> Void {
        let verifier = try NoteVerifierKey(name: name, ed25519: key.publicKey, type: .cosignatureV1)
        let cosignature = try Cosignature.sign(text: Array(text.utf8), key: key, timestamp: timestamp)
        add(Signature(name: name, keyID: verifier.keyID, bytes: cosignature.bytes))
    }

    /// The witnesses of `witnesses` (type 0x04 keys) whose cosignatures verify, each once, with
    /// the time it cosigned. Lines of other keys are ignored (C2SP tlog-cosignature: clients
    /// ignore lines that do not match a configured name and key ID); a line of a known witness
    /// that does not verify counts for nothing.
    public func cosigners(_ witnesses: [NoteVerifierKey]) -> [(key: NoteVerifierKey, timestamp: UInt64)] {
        var found: [(key: NoteVerifierKey, timestamp: UInt64)] = []
        let bytes = Array(text.utf8)
        for signature in signatures {
            guard let key = witnesses.first(where: {
                $0.type == .cosignatureV1 && $0.name == signature.name && $0.keyID == signature.keyID
            }), !found.contains(where: { $0.key == key }), key.isValidSignature(signature.bytes, text: bytes),
                  let cosignature = try? Cosignature(bytes: signature.bytes)
            else { continue }
            found.append((key, cosignature.timestamp))
        }
        return found
    }

    /// The keys of `trusted` whose signatures verify, by C2SP's rule: signatures of unknown
    /// keys (name and ID not both matching) are ignored; a known key's signature that fails
    /// rejects the note; and at least one must verify.
    public func verifiedKeys(_ trusted: [NoteVerifierKey]) throws(NoteError) -> [NoteVerifierKey] {
        var verified: [NoteVerifierKey] = []
        let bytes = Array(text.utf8)
        for signature in signatures {
            guard let key = trusted.first(where: { $0.name == signature.name && $0.keyID == signature.keyID }),
                  key.type != .cosignatureV1 else { continue }
            guard key.isValidSignature(signature.bytes, text: bytes) else {
                throw .notVerified("the signature of \(key.name) does not verify")
            }
            if !verified.contains(key) { verified.append(key) }
        }
        guard !verified.isEmpty else { throw .notVerified("no signature of a trusted key") }
        return verified
    }

    /// Signed notes are UTF-8 without ASCII control characters other than newline, and the
    /// text ends in a newline.
    static func checkText(_ text: String) throws(NoteError) {
        guard text.hasSuffix("\n") else { throw .malformed("the note text does not end in a newline") }
        guard !text.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\n") || $0.value == 0x7f }) else {
            throw .malformed("the note contains a control character")
        }
    }
}
