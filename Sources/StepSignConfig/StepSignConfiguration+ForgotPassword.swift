extension StepSignConfiguration {
    /// `[forgot_password]`: resetting a forgotten password with an activation code.
    public struct ForgotPassword: Sendable, Equatable {
        /// `enabled`: whether the flow is offered. Default true.
        public var enabled: Bool
        /// `code_length`: characters in an activation code. Default 8; 6 to 32.
        public var codeLength: Int
        /// `code_ttl_seconds`: how long a code is valid. Default 600; 60 to 86400.
        public var codeTTLSeconds: Int
        /// `max_attempts`: wrong codes per user and hour, whatever codes were issued
        /// meanwhile; the last one voids the code. Default 3; 1 to 100.
        public var maxAttempts: Int
        /// `max_codes_per_hour`: `forgotPassword` and `resendActivationCode` per user and
        /// hour; more get error 14. Default 5; 1 to 100.
        public var maxCodesPerHour: Int
        /// `notifier`: argv of a program that delivers the code; it gets one JSON object on
        /// stdin: {"user", "verificationKey", "activationCode", "expiresAt"}. Empty: append
        /// that object as one line to `state_dir/outbox/USER` (0600). Default []; when set,
        /// the first element is an absolute path and no element is empty.
        public var notifier: [String]

        public init(
            enabled: Bool = true,
            codeLength: Int = 8,
            codeTTLSeconds: Int = 600,
            maxAttempts: Int = 3,
            maxCodesPerHour: Int = 5,
            notifier: [String] = []
        ) {
            self.enabled = enabled
            self.codeLength = codeLength
            self.codeTTLSeconds = codeTTLSeconds
            self.maxAttempts = maxAttempts
            self.maxCodesPerHour = maxCodesPerHour
            self.notifier = notifier
        }
    }
}
