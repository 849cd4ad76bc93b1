extension StepSignConfiguration {
    /// `[lda]`: local device authentication.
    public struct LDA: Sendable, Equatable {
        /// `enabled`: whether users may authenticate with an enrolled device key. Default true.
        public var enabled: Bool
        /// `enroll_fresh_seconds`: self-service `enrollDeviceKey` only this soon after the
        /// login (later: error 11, log in again). Default 300; 10 to 86400.
        public var enrollFreshSeconds: Int
        /// `fido2_rp_id`: the relying party ID of enrolled FIDO2 security keys (SPEC §5.7); an
        /// assertion's RP ID hash must be its SHA-256. Default "stepsign".
        public var fido2RPID: String
        /// `fido2_attestation`: "none" (default) or "direct": a security key's packed attestation
        /// must then chain to `fido2_attestation_roots`.
        public var fido2Attestation: String
        /// `fido2_attestation_roots`: PEM bundle of the attestation roots, or the absolute path
        /// of a file holding it (read at each enrolment); "" for none.
        public var fido2AttestationRoots: String

        public init(enabled: Bool = true, enrollFreshSeconds: Int = 300, fido2RPID: String = "stepsign",
                    fido2Attestation: String = "none", fido2AttestationRoots: String = "") {
            self.enabled = enabled
            self.enrollFreshSeconds = enrollFreshSeconds
            self.fido2RPID = fido2RPID
            self.fido2Attestation = fido2Attestation
            self.fido2AttestationRoots = fido2AttestationRoots
        }
    }
}
