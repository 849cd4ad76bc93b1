/// The protected header of a JWS, as far as stepsign reads it.
public struct JWSHeader: Codable, Sendable, Equatable {
    /// Signature algorithm; stepsign accepts only "ES256".
    public var alg: String
    /// Key ID of the signing key.
    public var kid: String?
    /// Media type, "stepsign+jwt" for stepsign signatures.
    public var typ: String?
    /// Critical extensions (RFC 7515 §4.1.11). stepsign understands none, so any JWS that has
    /// this member is refused.
    public var crit: [String]?

    /// A header with the given members.
    public init(alg: String, kid: String? = nil, typ: String? = nil, crit: [String]? = nil) {
        self.alg = alg
        self.kid = kid
        self.typ = typ
        self.crit = crit
    }
}
