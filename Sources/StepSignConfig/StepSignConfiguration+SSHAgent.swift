extension StepSignConfiguration {
    /// `[ssh_agent]`: the ssh-agent protocol on a socket of its own (SPEC §3.5), off unless
    /// `socket` is set.
    public struct SSHAgent: Sendable, Equatable {
        /// `socket`: where the agent listens; "" (the default) for no agent. Absolute, at most
        /// 107 bytes (sun_path). Mode and group are `[server]`'s.
        public var socket: String
        /// `namespaces`: the SSHSIG namespaces the agent signs. Default ["git", "file"]; each
        /// 1 to 64 printable ASCII characters without spaces.
        public var namespaces: [String]
        /// `allow_authentication`: also sign an SSH login's session data. Default false.
        public var allowAuthentication: Bool
        /// `unlock_seconds`: the longest window `stepsign unlock --for` may open. Default 900;
        /// 1 to 86400.
        public var unlockSeconds: Int
        /// `max_uses`: agent signatures per window. Default 100; 1 to 100,000.
        public var maxUses: Int

        public init(socket: String = "", namespaces: [String] = ["git", "file"], allowAuthentication: Bool = false,
                    unlockSeconds: Int = 900, maxUses: Int = 100) {
            self.socket = socket
            self.namespaces = namespaces
            self.allowAuthentication = allowAuthentication
            self.unlockSeconds = unlockSeconds
            self.maxUses = maxUses
        }

        /// Whether the agent is on.
        public var enabled: Bool { !socket.isEmpty }
    }
}

extension StepSignConfiguration.SSHAgent {
    init(_ t: ConfigTableReader) throws(ConfigError) {
        try t.rejectUnknown(["socket", "namespaces", "allow_authentication", "unlock_seconds", "max_uses"])
        let d = Self()
        self.init(
            socket: try t.string("socket", default: d.socket) { s in
                s.isEmpty ? nil : Check.absolutePath(s) ?? (s.utf8.count > 107 ? "must be at most 107 bytes long (sun_path)" : nil)
            },
            namespaces: try t.stringArray("namespaces", default: d.namespaces) { s in
                (1...64).contains(s.utf8.count) && s.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
                    ? nil : "expected a namespace of 1 to 64 printable ASCII characters without spaces, found \(TOMLValue.quoted(s))"
            },
            allowAuthentication: try t.bool("allow_authentication", default: d.allowAuthentication),
            unlockSeconds: try t.integer("unlock_seconds", default: d.unlockSeconds, in: 1...86400),
            maxUses: try t.integer("max_uses", default: d.maxUses, in: 1...100_000)
        )
    }
}
