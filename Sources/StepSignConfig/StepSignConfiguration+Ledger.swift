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
        /// `tiles_dir`: where the daemon publishes the log as C2SP tlog-tiles (hash tiles, entry
        /// bundles, `checkpoint`) after each checkpoint, for a static web server (SPEC §5.6).
        /// "" (the default): not published. An absolute path.
        public var tilesDir: String
        /// `log_key_overlap_entries`: after `admin.rotateLogKey`, every note carries both the old
        /// and the new log key's signature until the log has this many entries more (SPEC §2), so
        /// that witnesses and verifiers can be given the new key meanwhile. Default 100,000; 0 to
        /// 1,000,000,000 (0: the old key stops at once).
        public var logKeyOverlapEntries: Int

        public init(checkpointEntries: Int = 1000, checkpointSeconds: Int = 60, origin: String = "", witnessQuorum: Int = 0,
                    tilesDir: String = "", logKeyOverlapEntries: Int = 100_000) {
            self.checkpointEntries = checkpointEntries
            self.checkpointSeconds = checkpointSeconds
            self.origin = origin
            self.witnessQuorum = witnessQuorum
            self.tilesDir = tilesDir
            self.logKeyOverlapEntries = logKeyOverlapEntries
        }
    }
}

extension StepSignConfiguration.Ledger {
    init(_ t: ConfigTableReader) throws(ConfigError) {
        try t.rejectUnknown(["checkpoint_entries", "checkpoint_seconds", "origin", "witness_quorum", "tiles_dir",
                             "log_key_overlap_entries"])
        let d = Self()
        self.init(
            checkpointEntries: try t.integer("checkpoint_entries", default: d.checkpointEntries, in: 1...1_000_000),
            checkpointSeconds: try t.integer("checkpoint_seconds", default: d.checkpointSeconds, in: 1...86400),
            origin: try t.string("origin", default: d.origin) { origin in
                origin.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7f || $0 == "+" || $0.properties.isWhitespace }
                    ? "must be one word of printable characters, without spaces or +" : nil
            },
            witnessQuorum: try t.integer("witness_quorum", default: d.witnessQuorum, in: 0...64),
            tilesDir: try t.string("tiles_dir", default: d.tilesDir) { dir in
                dir.isEmpty || (dir.hasPrefix("/") && dir != "/" && !dir.contains("\u{0}")) ? nil : "must be an absolute path (or \"\" for none)"
            },
            logKeyOverlapEntries: try t.integer("log_key_overlap_entries", default: d.logKeyOverlapEntries, in: 0...1_000_000_000)
        )
    }
}
