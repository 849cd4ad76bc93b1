extension StepSignConfiguration {
    /// `[signing]`: signing options.
    public struct Signing: Sendable, Equatable {
        /// `allow_level_0`: whether a caller may ask for authentication level 0 (sign with
        /// no user authentication). Default false.
        public var allowLevel0: Bool

        public init(allowLevel0: Bool = false) {
            self.allowLevel0 = allowLevel0
        }
    }
}
