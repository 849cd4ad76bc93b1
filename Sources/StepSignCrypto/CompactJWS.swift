/// A parsed JWS in compact serialization. Parsing checks the form only; nothing in it is
/// trusted until `isValidES256(key:)` says so.
public struct CompactJWS: Sendable {
    /// The decoded protected header.
    public let header: JWSHeader
    /// The protected header's JSON bytes, as signed.
    public let headerJSON: [UInt8]
    /// The payload bytes.
    public let payload: [UInt8]
    /// The signature bytes (for ES256: raw r||s).
    public let signature: [UInt8]
    /// The ASCII bytes the signature covers: `BASE64URL(header) "." BASE64URL(payload)`.
    public let signingInput: [UInt8]

    /// True when `alg` is ES256, there are no critical extensions, and `signature` is a valid
    /// ES256 signature by `key` over `signingInput`.
    public func isValidES256(key: P256PublicKey) -> Bool {
        header.alg == "ES256" && header.crit == nil && key.isValidSignatureES256(signature, for: signingInput)
    }
}
