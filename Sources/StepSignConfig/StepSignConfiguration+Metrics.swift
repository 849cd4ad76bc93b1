extension StepSignConfiguration {
    /// `[metrics]`: the Prometheus endpoint (issue 27), off unless `listen` is set.
    public struct Metrics: Sendable, Equatable {
        /// Where `GET /metrics` is served.
        public enum Listen: Sendable, Equatable {
            /// Not served (the default).
            case off
            /// HTTP on a Unix socket at this absolute path (mode 0660, group `server.socket_group`):
            /// what the hardened unit allows, since it keeps `PrivateNetwork=yes`.
            case unix(path: String)
            /// HTTP on a loopback address (127.0.0.0/8 or ::1) and port; under the unit only with
            /// the drop-in that opens the network (docs/metrics.md).
            case loopback(host: String, port: Int)
        }

        /// `listen`: `""` (off), `"unix:/run/stepsign/metrics.sock"`, or `"127.0.0.1:9464"` /
        /// `"[::1]:9464"`. Any other address is refused: metrics name users by no label, but
        /// counts and timings are still nothing to serve to a network.
        public var listen: Listen

        public init(listen: Listen = .off) {
            self.listen = listen
        }

        /// Reads `listen`'s text; nil and a reason when it is none of the three forms.
        public static func listen(_ text: String) -> (Listen?, String?) {
            if text.isEmpty { return (.off, nil) }
            if text.hasPrefix("unix:") {
                let path = String(text.dropFirst(5))
                guard path.hasPrefix("/"), !path.contains("\u{0}") else { return (nil, "a Unix socket needs an absolute path: unix:/…") }
                guard path.utf8.count <= 107 else { return (nil, "the socket path must be at most 107 bytes long (sun_path)") }
                return (.unix(path: path), nil)
            }
            let host: Substring, portText: Substring
            if text.hasPrefix("[") {
                guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                    return (nil, "expected [::1]:PORT")
                }
                host = text[text.index(after: text.startIndex)..<close]
                portText = text[text.index(close, offsetBy: 2)...]
            } else {
                guard let colon = text.lastIndex(of: ":") else { return (nil, "expected unix:/PATH, 127.0.0.1:PORT or [::1]:PORT") }
                host = text[..<colon]
                portText = text[text.index(after: colon)...]
            }
            guard let port = Int(portText), (1...65535).contains(port) else { return (nil, "the port must be 1 to 65535") }
            guard Self.isLoopback(String(host)) else {
                return (nil, "only a loopback address (127.0.0.0/8, ::1) is served; put a proxy in front for more")
            }
            return (.loopback(host: String(host), port: port), nil)
        }

        static func isLoopback(_ host: String) -> Bool {
            if host == "::1" { return true }
            let parts = host.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4, parts.allSatisfy({ part in UInt8(part).map { String($0) == part } ?? false }) else { return false }
            return parts[0] == "127"
        }
    }
}

extension StepSignConfiguration.Metrics {
    init(_ t: ConfigTableReader) throws(ConfigError) {
        try t.rejectUnknown(["listen"])
        var parsed = Listen.off
        _ = try t.string("listen", default: "") { text in
            let (listen, problem) = Self.listen(text)
            if let listen { parsed = listen }
            return problem
        }
        self.init(listen: parsed)
    }
}
