/// Why text is not a JWS in compact serialization.
public enum JWSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not three strict base64url parts separated by dots (or too long).
    case malformed(String)
    /// The protected header is not a JSON object with a string `alg`.
    case invalidHeader(String)
    /// The protected header names a member twice (RFC 7515 §5.2 says reject).
    case duplicateHeaderMember(String)

    /// A one-line explanation for logs and CLI output.
    public var description: String {
        switch self {
        case .malformed(let why): "not a compact JWS: \(why)"
        case .invalidHeader(let why): "invalid JWS header: \(why)"
        case .duplicateHeaderMember(let name): "the JWS header has the member \"\(name)\" twice"
        }
    }
}
