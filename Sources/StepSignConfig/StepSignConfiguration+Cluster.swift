extension StepSignConfiguration {
    /// `[cluster]`: trust between daemons that share a database (SPEC §5.4).
    public struct Cluster: Sendable, Equatable {
        /// `root_key`: the operator's cluster root public key, as PEM (SPKI) or JWK text, or
        /// the absolute path of a file holding one. Empty (the default): no root, so this
        /// daemon trusts only its own keys. Another instance's key is trusted only through a
        /// chain of endorsements ending at this key; whoever may change it may make any key
        /// trusted, so a file named here is checked by the strict modes as the configuration
        /// file is.
        public var rootKey: String

        public init(rootKey: String = "") {
            self.rootKey = rootKey
        }

        /// Whether `root_key` names a file rather than holding the key itself.
        public var rootKeyIsFile: Bool { rootKey.hasPrefix("/") }
    }
}

extension StepSignConfiguration.Cluster {
    init(_ t: ConfigTableReader) throws(ConfigError) {
        try t.rejectUnknown(["root_key"])
        self.init(rootKey: try t.string("root_key", default: "") { text in
            if text.isEmpty || text.hasPrefix("/") || text.contains("-----BEGIN PUBLIC KEY-----") || text.hasPrefix("{") {
                return nil
            }
            return "expected a PEM public key, a JWK, or the absolute path of a file holding one"
        })
    }
}
