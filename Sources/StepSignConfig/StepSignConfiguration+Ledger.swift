extension StepSignConfiguration {
    /// `[ledger]`: ledger checkpoints (SPEC §5.3).
    public struct Ledger: Sendable, Equatable {
        /// `checkpoint_entries`: a checkpoint after every this many entries, and the longest
        /// run of entries the audit accepts without one. Default 1000; 1 to 1,000,000.
        public var checkpointEntries: Int
        /// `checkpoint_seconds`: a checkpoint at least this often while entries are added.
        /// Default 60; 1 to 86400.
        public var checkpointSeconds: Int
        /// `origin`: the transparency log's name, the first line of its checkpoints and the key
        /// name of their signatures (SPEC §5.5). "" (the default): `stepsign.<host name>/<instance>`.
        /// One line of printable text without spaces or `+` (it names note keys too).
        public var origin: String
        /// `witness_quorum`: how many `[[witness]]` cosignatures make the latest checkpoint
        /// witnessed, as `status` reports it (SPEC §5.6). 0 (the default): none asked for; at
        /// most the number of witnesses configured.
        public var witnessQuorum: Int

        public init(checkpointEntries: Int = 1000, checkpointSeconds: Int = 60, origin: String = "", witnessQuorum: Int = 0) {
            self.checkpointEntries = checkpointEntries
            self.checkpointSeconds = checkpointSeconds
            self.origin = origin
            self.witnessQuorum = witnessQuorum
        }
    }
}

extension StepSignConfiguration.Ledger {
    init(_ t: ConfigTableReader) throws(ConfigError) {
        try t.rejectUnknown(["checkpoint_entries", "checkpoint_seconds", "origin", "witness_quorum"])
        let d = Self()
        self.init(
            checkpointEntries: try t.integer("checkpoint_entries", default: d.checkpointEntries, in: 1...1_000_000),
            checkpointSeconds: try t.integer("checkpoint_seconds", default: d.checkpointSeconds, in: 1...86400),
            origin: try t.string("origin", default: d.origin) { origin in
                origin.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7f || $0 == "+" || $0.properties.isWhitespace }
                    ? "must be one word of printable characters, without spaces or +" : nil
            },
            witnessQuorum: try t.integer("witness_quorum", default: d.witnessQuorum, in: 0...64)
        )
    }
}
