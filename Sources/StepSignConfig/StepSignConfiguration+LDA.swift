extension StepSignConfiguration {
    /// `[lda]`: local device authentication.
    public struct LDA: Sendable, Equatable {
        /// `enabled`: whether users may authenticate with an enrolled device key. Default true.
        public var enabled: Bool

        public init(enabled: Bool = true) {
            self.enabled = enabled
        }
    }
}
