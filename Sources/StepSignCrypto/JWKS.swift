/// A JSON Web Key Set (RFC 7517 §5): `{"keys": [...]}`.
public struct JWKS: Codable, Sendable, Equatable {
    /// The keys, in the order published.
    public var keys: [JWK]

    /// A set of `keys`.
    public init(keys: [JWK]) {
        self.keys = keys
    }
}
