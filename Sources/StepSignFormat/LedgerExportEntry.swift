import StepSignCrypto
import StepSignProtocol

/// One line of an exported ledger (`admin.exportLedger`, `stepsign-verify ledger`): hashes
/// as lowercase hex.
public struct LedgerExportEntry: Codable, Sendable, Equatable {
    /// Sequence number, from 1 without gaps.
    public var seq: Int64
    /// The signature ID (the JWS's `jti`).
    public var signatureID: String
    /// The JWS.
    public var payloadSignature: String
    /// The previous entry's hash, 64 hex digits.
    public var prevHash: String
    /// This entry's hash, 64 hex digits.
    public var entryHash: String
    /// The row's user column (absent in exports made before it was exported).
    public var user: String?
    /// The row's peer columns (absent in exports made before they were exported).
    public var peer: SignaturePeer?
    /// "signature" or "event" (SPEC §5.4), as the JWS's `typ` says; absent in exports made
    /// before events existed (all signatures). Informative: the verifier reads the JWS.
    public var kind: String?

    /// An entry with the given values.
    public init(seq: Int64, signatureID: String, payloadSignature: String, prevHash: String, entryHash: String,
                user: String? = nil, peer: SignaturePeer? = nil) {
        self.seq = seq
        self.signatureID = signatureID
        self.payloadSignature = payloadSignature
        self.prevHash = prevHash
        self.entryHash = entryHash
        self.user = user
        self.peer = peer
        self.kind = Self.isEvent(payloadSignature) ? "event" : "signature"
    }

    /// Whether `jws` is an event (its header's `typ` is `stepsign-event+jwt`) rather than a
    /// signature; false for anything that does not parse.
    public static func isEvent(_ jws: String) -> Bool {
        // The header only: the payload, up to 1 MiB, is not decoded for this.
        guard let header = jws.utf8.split(separator: UInt8(ascii: "."), maxSplits: 1, omittingEmptySubsequences: false).first,
              let json = Base64URL.decode(ascii: header), let typ = (try? JSONParser.parse(json))?["typ"]
        else { return false }
        return typ.stringValue == LedgerEvent.headerType
    }

    /// The export form of `link`.
    public init(_ link: LedgerLink) {
        self.init(seq: link.seq, signatureID: link.signatureID, payloadSignature: link.payloadSignature,
                  prevHash: Hex.encode(link.prevHash), entryHash: Hex.encode(link.entryHash), user: link.user, peer: link.peer)
    }

    /// The chain link, with the hashes decoded. Throws when a hash is not 32 bytes of hex.
    public func ledgerLink() throws(LedgerExportError) -> LedgerLink {
        guard let prev = Hex.decode(prevHash), prev.count == 32 else { throw .badHash(seq: seq, field: "prevHash") }
        guard let entry = Hex.decode(entryHash), entry.count == 32 else { throw .badHash(seq: seq, field: "entryHash") }
        return LedgerLink(seq: seq, signatureID: signatureID, payloadSignature: payloadSignature, prevHash: prev, entryHash: entry,
                          user: user, peer: peer)
    }
}
