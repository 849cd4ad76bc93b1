extension StepSignConfiguration {
    /// `[signing]`: signing options.
    public struct Signing: Sendable, Equatable {
        /// `allow_level_0`: whether a caller may ask for authentication level 0 (sign with
        /// no user authentication). Default false.
        public var allowLevel0: Bool
        /// `max_batch_items`: the most items one `authenticateUserAndSignBatch` may sign behind
        /// its one step-up (SPEC §3.4). Default 1000, at most ``maximumBatchItems``.
        public var maxBatchItems: Int
        /// `idempotency_seconds`: how long a signing request's `idempotencyKey` is remembered
        /// (SPEC §3, "Idempotent retries"): a repeat within it gets the first reply again.
        /// Default 86400, 60 to ``maximumIdempotencySeconds``.
        public var idempotencySeconds: Int

        /// The largest `max_batch_items`: a batch is committed in one transaction, and its
        /// request must fit one 64 KiB line anyway (at least 28 bytes an item).
        public static let maximumBatchItems = 10_000

        /// The longest `idempotency_seconds`: 30 days.
        public static let maximumIdempotencySeconds = 2_592_000

        public init(allowLevel0: Bool = false, maxBatchItems: Int = 1000, idempotencySeconds: Int = 86400) {
            self.allowLevel0 = allowLevel0
            self.maxBatchItems = maxBatchItems
            self.idempotencySeconds = idempotencySeconds
        }
    }
}
