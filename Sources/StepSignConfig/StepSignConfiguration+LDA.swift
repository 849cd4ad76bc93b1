extension StepSignConfiguration {
    /// `[lda]`: local device authentication.
    public struct LDA: Sendable, Equatable {
        /// `enabled`: whether users may authenticate with an enrolled device key. Default true.
        public var enabled: Bool
        /// `enroll_fresh_seconds`: self-service `enrollDeviceKey` only this soon after the
        /// login (later: error 11, log in again). Default 300; 10 to 86400.
        public var enrollFreshSeconds: Int

        public init(enabled: Bool = true, enrollFreshSeconds: Int = 300) {
            self.enabled = enabled
            self.enrollFreshSeconds = enrollFreshSeconds
        }
    }
}
