extension StepSignConfiguration {
    /// `[signing]`: signing options.
    public struct Signing: Sendable, Equatable {
        /// `allow_level_0`: whether a caller may ask for authentication level 0 (sign with
        /// no user authentication). Default false.
        public var allowLevel0: Bool
        /// `max_batch_items`: the most items one `authenticateUserAndSignBatch` may sign behind
        /// its one step-up (SPEC §3.4). Default 1000, at most ``maximumBatchItems``.
        public var maxBatchItems: Int

        /// The largest `max_batch_items`: a batch is committed in one transaction, and its
        /// request must fit one 64 KiB line anyway (at least 28 bytes an item).
        public static let maximumBatchItems = 10_000

        public init(allowLevel0: Bool = false, maxBatchItems: Int = 1000) {
            self.allowLevel0 = allowLevel0
            self.maxBatchItems = maxBatchItems
        }
    }
}
