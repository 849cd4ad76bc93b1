extension StepSignConfiguration {
    /// `[server]`: the Unix socket and its limits.
    public struct Server: Sendable, Equatable {
        /// `socket`: the socket path. Default "/run/stepsign/stepsignd.sock"; absolute, at
        /// most 107 bytes (the `sun_path` limit).
        public var socket: String
        /// `socket_mode`: the socket's permission bits, written as an octal string.
        /// Default "0660" (0o660); 1 to 4 octal digits, at most "0777".
        public var socketMode: UInt16
        /// `socket_group`: the socket's group. Default "stepsign"; "" leaves the group the
        /// socket was created with.
        public var socketGroup: String
        /// `state_dir`: the state directory (database, keys, outbox). Default
        /// "/var/lib/stepsign"; absolute.
        public var stateDir: String
        /// `max_connections`: open connections at most. Default 256; 1 to 65536.
        public var maxConnections: Int
        /// `max_connections_per_uid`: open connections of one peer uid at most; one more gets
        /// error 14 and is closed. Default 64; 1 to 65536.
        public var maxConnectionsPerUID: Int
        /// `idle_timeout_seconds`: a connection with no request outstanding for this long is
        /// sent error 5 (`id` null) and closed. Default 300; 1 to 86400.
        public var idleTimeoutSeconds: Int
        /// `challenge_timeout_seconds`: an open challenge (a password or code the daemon
        /// waits for) expires after this long. Default 300; 10 to 86400.
        public var challengeTimeoutSeconds: Int
        /// `session_max_seconds`: a login ends this long after it began, whatever its
        /// activity (SPEC §3). Default 28800 (8 hours); 60 to 2592000 (30 days).
        public var sessionMaxSeconds: Int

        public init(
            socket: String = "/run/stepsign/stepsignd.sock",
            socketMode: UInt16 = 0o660,
            socketGroup: String = "stepsign",
            stateDir: String = "/var/lib/stepsign",
            maxConnections: Int = 256,
            maxConnectionsPerUID: Int = 64,
            idleTimeoutSeconds: Int = 300,
            challengeTimeoutSeconds: Int = 300,
            sessionMaxSeconds: Int = 28800
        ) {
            self.socket = socket
            self.socketMode = socketMode
            self.socketGroup = socketGroup
            self.stateDir = stateDir
            self.maxConnections = maxConnections
            self.maxConnectionsPerUID = maxConnectionsPerUID
            self.idleTimeoutSeconds = idleTimeoutSeconds
            self.challengeTimeoutSeconds = challengeTimeoutSeconds
            self.sessionMaxSeconds = sessionMaxSeconds
        }
    }
}
