/// Why an ECDSA signature could not be converted between raw r||s and DER.
public enum ECDSASignatureError: Error, Sendable, Equatable {
    /// A raw ES256 signature must be exactly 64 bytes; this many were given.
    case wrongRawLength(Int)
    /// Not a strict DER `ECDSA-Sig-Value`, or r or s does not fit in 32 bytes.
    case malformedDER
    /// libcrypto failed for another reason (e.g. out of memory).
    case openSSL(OpenSSLError)
}
