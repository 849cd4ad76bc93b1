#if canImport(FoundationEssentials)
import FoundationEssentials
import StepSignProtocol
#else
import Foundation
#endif
import StepSignCrypto

/// A ledger checkpoint (SPEC §5.3): the daemon's signature over the ledger head, a compact
/// JWS with header `{"alg":"ES256","kid","typ":"stepsign-checkpoint+jwt"}` and these claims.
///
/// A checkpoint kept outside the database (the log, a copy an auditor took) pins the chain:
/// an entry changed, removed or re-chained at or below its `seq`, and a ledger cut short
/// below it, no longer match it.
public struct LedgerCheckpoint: Codable, Sendable, Equatable {
    /// The `typ` header value of every checkpoint.
    public static let headerType = "stepsign-checkpoint+jwt"

    /// The daemon instance that signed it.
    public var iss: String
    /// The sequence number of the entry it signs (0: the empty ledger).
    public var seq: Int64
    /// That entry's hash, 64 lowercase hex digits (the genesis hash for seq 0).
    public var entryHash: String
    /// When it was signed, Unix seconds.
    public var iat: Int64

    /// A checkpoint with the given values.
    public init(iss: String, seq: Int64, entryHash: [UInt8], iat: Int64) {
        self.iss = iss
        self.seq = seq
        self.entryHash = Hex.encode(entryHash)
        self.iat = iat
    }

    /// The claims as compact JSON, members in the order of SPEC §5.3.
    public var jsonBytes: [UInt8] {
        var writer = JSONWriter(capacity: 160 + iss.utf8.count)
        writer.beginObject()
        writer.member("iss", iss)
        writer.member("seq", seq)
        writer.member("entryHash", entryHash)
        writer.member("iat", iat)
        writer.endObject()
        return writer.bytes
    }

    /// The protected header JSON, members in the fixed order alg, kid, typ.
    public static func headerJSON(kid: String) -> [UInt8] {
        ES256Header.json(kid: kid, typ: headerType)
    }

    /// Signs this checkpoint with `key`, naming it `kid`.
    public func signed(key: P256PrivateKey, kid: String) throws(OpenSSLError) -> String {
        try JWS.signES256(headerJSON: Self.headerJSON(kid: kid), payload: jsonBytes, key: key)
    }

    /// The entry hash as bytes, or nil when it is not 64 hex digits.
    public var entryHashBytes: [UInt8]? {
        guard let bytes = Hex.decode(entryHash), bytes.count == 32 else { return nil }
        return bytes
    }

    /// The checkpoint in `compact` once it is proven to be one, signed by a trusted key: the
    /// same rules as ``StepSignSignature/verify(_:trustedKeys:)`` (ES256, low-S, no
    /// duplicate members), `typ` stepsign-checkpoint+jwt, and a well-formed entry hash.
    public static func verify(_ compact: String, trustedKeys: TrustedKeys) throws(SignatureVerificationError) -> (checkpoint: LedgerCheckpoint, kid: String) {
        let (jws, kid) = try StepSignSignature.verifiedPayload(compact, type: headerType, trustedKeys: trustedKeys)
        let checkpoint = try StepSignSignature.decodeStrictly(LedgerCheckpoint.self, from: jws.payload)
        guard checkpoint.seq >= 0, checkpoint.entryHashBytes != nil else {
            throw .malformedClaims("seq must be at least 0 and entryHash 64 hex digits")
        }
        return (checkpoint, kid)
    }
}
