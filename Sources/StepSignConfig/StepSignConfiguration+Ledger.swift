extension StepSignConfiguration {
    /// `[ledger]`: ledger checkpoints (SPEC §5.3).
    public struct Ledger: Sendable, Equatable {
        /// `checkpoint_entries`: a checkpoint after every this many entries, and the longest
        /// run of entries the audit accepts without one. Default 1000; 1 to 1,000,000.
        public var checkpointEntries: Int
        /// `checkpoint_seconds`: a checkpoint at least this often while entries are added.
        /// Default 60; 1 to 86400.
        public var checkpointSeconds: Int

        public init(checkpointEntries: Int = 1000, checkpointSeconds: Int = 60) {
            self.checkpointEntries = checkpointEntries
            self.checkpointSeconds = checkpointSeconds
        }
    }
}

extension StepSignConfiguration.Ledger {
    init(_ t: ConfigTableReader) throws(ConfigError) {
        try t.rejectUnknown(["checkpoint_entries", "checkpoint_seconds"])
        let d = Self()
        self.init(
            checkpointEntries: try t.integer("checkpoint_entries", default: d.checkpointEntries, in: 1...1_000_000),
            checkpointSeconds: try t.integer("checkpoint_seconds", default: d.checkpointSeconds, in: 1...86400)
        )
    }
}
