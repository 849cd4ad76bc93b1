extension StepSignConfiguration {
    /// `[stepup]`: the step-up reuse window (SPEC §3.4). Off by default: every signature steps
    /// up, as the REL-ID SDK does.
    public struct StepUp: Sendable, Equatable {
        /// Whose step-up a later request may reuse.
        public enum ReuseScope: String, Sendable, CaseIterable {
            /// Only requests of the connection (session) that stepped up.
            case session
            /// Requests of any connection of the same peer uid.
            case peer
        }

        /// `reuse_seconds`: how long after a step-up further signing requests reuse it. Default
        /// 0 (no reuse); at most 86400.
        public var reuseSeconds: Int
        /// `reuse_max_uses`: how many signatures one step-up may cover besides its own. Default
        /// 10; 1 to 100,000.
        public var reuseMaxUses: Int
        /// `reuse_scope`: `"session"` (the default) or `"peer"`.
        public var reuseScope: ReuseScope
        /// `reuse_levels`: the step-up levels whose window may be reused (1 to 4; level 0 needs
        /// none). Default [1]; level 4 (IDV biometric) only when named.
        public var reuseLevels: [Int]

        public init(reuseSeconds: Int = 0, reuseMaxUses: Int = 10, reuseScope: ReuseScope = .session, reuseLevels: [Int] = [1]) {
            self.reuseSeconds = reuseSeconds
            self.reuseMaxUses = reuseMaxUses
            self.reuseScope = reuseScope
            self.reuseLevels = reuseLevels
        }

        /// Whether a step-up at `level` opens a reuse window.
        public func reusable(level: Int) -> Bool {
            reuseSeconds > 0 && reuseLevels.contains(level)
        }
    }
}

extension StepSignConfiguration.StepUp {
    init(_ t: ConfigTableReader) throws(ConfigError) {
        try t.rejectUnknown(["reuse_seconds", "reuse_max_uses", "reuse_scope", "reuse_levels"])
        let d = Self()
        let scope = try t.string("reuse_scope", default: d.reuseScope.rawValue) { value in
            ReuseScope(rawValue: value) == nil ? "must be \"session\" or \"peer\"" : nil
        }
        let levels: [Int] = try t.integerArray("reuse_levels", default: d.reuseLevels, in: 1...4)
        guard Set(levels).count == levels.count else { throw t.error("reuse_levels", t.table["reuse_levels"], "names a level twice") }
        self.init(
            reuseSeconds: try t.integer("reuse_seconds", default: d.reuseSeconds, in: 0...86400),
            reuseMaxUses: try t.integer("reuse_max_uses", default: d.reuseMaxUses, in: 1...100_000),
            reuseScope: ReuseScope(rawValue: scope) ?? d.reuseScope,
            reuseLevels: levels
        )
    }
}
