/// Why a P-256 key could not be read or written.
public enum P256KeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text is not a PEM block, JWK or JWKS of the expected kind.
    case malformed(String)
    /// A well-formed key, but not an EC key on P-256 (or its point is not on the curve).
    case unsupportedKey(String)
    /// The private key is encrypted and no passphrase was given.
    case passphraseRequired
    /// The private key is encrypted and could not be decrypted: wrong passphrase (or damage).
    case decryptionFailed
    /// libcrypto failed in a way that says nothing about the input (e.g. out of memory).
    case openSSL(OpenSSLError)

    /// A one-line explanation for logs and CLI output.
    public var description: String {
        switch self {
        case .malformed(let why): "malformed key: \(why)"
        case .unsupportedKey(let why): "unsupported key: \(why)"
        case .passphraseRequired: "the private key is encrypted and no passphrase was given"
        case .decryptionFailed: "the private key could not be decrypted (wrong passphrase?)"
        case .openSSL(let error): error.description
        }
    }
}
