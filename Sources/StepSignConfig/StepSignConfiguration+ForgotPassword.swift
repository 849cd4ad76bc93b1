extension StepSignConfiguration {
    /// `[forgot_password]`: resetting a forgotten password with an activation code.
    public struct ForgotPassword: Sendable, Equatable {
        /// `enabled`: whether the flow is offered. Default true.
        public var enabled: Bool
        /// `code_length`: characters in an activation code. Default 8; 6 to 32.
        public var codeLength: Int
        /// `code_ttl_seconds`: how long a code is valid. Default 600; 60 to 86400.
        public var codeTTLSeconds: Int
        /// `max_attempts`: wrong codes before the code is void. Default 3; 1 to 100.
        public var maxAttempts: Int
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
            notifier: [String] = []
        ) {
            self.enabled = enabled
            self.codeLength = codeLength
            self.codeTTLSeconds = codeTTLSeconds
            self.maxAttempts = maxAttempts
            self.notifier = notifier
        }
    }
}
