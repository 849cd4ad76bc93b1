extension StepSignConfiguration {
    /// `[idv]`: the identity verification server behind authentication level 4.
    public struct IDV: Sendable, Equatable {
        /// `issuer`: the IDV server's issuer; "" refuses level 4 with error 170. Default "".
        public var issuer: String
        /// `trusted_keys`: absolute path of the IDV server's PEM bundle or JWKS. Default "";
        /// required when `issuer` is set.
        public var trustedKeys: String
        /// `max_age_seconds`: the oldest IDV assertion accepted. Default 300; 1 to 86400.
        public var maxAgeSeconds: Int

        public init(issuer: String = "", trustedKeys: String = "", maxAgeSeconds: Int = 300) {
            self.issuer = issuer
            self.trustedKeys = trustedKeys
            self.maxAgeSeconds = maxAgeSeconds
        }
    }
}
