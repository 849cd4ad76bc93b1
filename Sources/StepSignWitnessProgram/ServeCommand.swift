#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Logging
import ServiceLifecycle
import StepSignFormat
import StepSignSystem
import StepSignWitness
import UnixSignals

/// `stepsign-witness serve --listen HOST:PORT --state-dir DIR --log VKEY [--log VKEY …]`.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve C2SP tlog-witness v1's add-checkpoint over HTTP.",
        discussion: """
            Each --log key's name is the origin of the log it signs; give several keys of one \
            origin while a log rotates its key. The state directory keeps, per origin, the latest \
            checkpoint cosigned (made durable before its cosignature is sent), the witness's \
            Ed25519 key (made on first start) and its name. Once listening it prints \
            "listening HOST:PORT" on standard output (PORT 0 picks a free port).
            """
    )

    @Option(help: "The address and port to listen on, e.g. 127.0.0.1:7380 or [::1]:7380.")
    var listen: String

    @Option(help: "The witness's state directory (created 0700 if missing).")
    var stateDir: String

    @Option(help: "The witness's name (the key name of its cosignatures); needed on first start.")
    var name: String?

    @Option(name: .customLong("log"), help: "A log's verifier key (name+hex8+base64), whose name is the log's origin; or \"ORIGIN VKEY\" for a key named otherwise. Repeatable.")
    var logs: [String] = []

    @Option(name: .customLong("log-file"), help: "A file of --log values, one a line (blank lines and # comments skipped).")
    var logFiles: [String] = []

    @Option(help: "A prefix of the URL path, e.g. /witness for /witness/add-checkpoint.")
    var prefix: String = ""

    @Option(help: "The most connections open at once.")
    var maxConnections: Int = 256

    @Option(help: "Close a connection that sends nothing for this many seconds.")
    var idleTimeout: Int = 30

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "notice"

    func run() async throws {
        guard let (host, port) = Self.hostAndPort(listen) else {
            throw ValidationError("--listen takes HOST:PORT, e.g. 127.0.0.1:7380 or [::1]:7380")
        }
        guard maxConnections > 0, idleTimeout > 0 else {
            throw ValidationError("--max-connections and --idle-timeout are positive")
        }
        guard StandardErrorLogging.bootstrap(level: logLevel) != nil else { throw ValidationError("unknown --log-level \(logLevel)") }
        let logger = Logger(label: "stepsign-witness")
        let witness: Witness
        do {
            var keys: [(origin: String, key: NoteVerifierKey)] = []
            var texts = logs
            for file in logFiles {
                let bytes: [UInt8]
                do { bytes = try SecureFile.read(file) } catch { throw WitnessSetupError("--log-file \(file): \(error)") }
                texts += String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
                    .filter { !$0.allSatisfy(\.isWhitespace) && !$0.hasPrefix("#") }
            }
            for text in texts {
                // A key has no spaces: the last word is the key, what comes before it the origin.
                let words = text.split(whereSeparator: \.isWhitespace)
                guard let last = words.last else { continue }
                do {
                    let key = try NoteVerifierKey(String(last))
                    let origin = words.count > 1 ? words.dropLast().joined(separator: " ") : key.name
                    keys.append((origin, key))
                } catch {
                    throw WitnessSetupError("--log \(text): \(error)")
                }
            }
            let directory = try WitnessStateDirectory(path: stateDir, name: name)
            witness = try Witness(directory: directory, logs: keys, now: { UInt64(time(nil)) }, logger: logger)
        } catch {
            StandardStreams.error("stepsign-witness: \(error)")
            throw ExitCode(78)
        }
        let server = WitnessHTTPServer(
            witness: witness, host: host, port: port, prefix: prefix, maxConnections: maxConnections,
            idleTimeout: .seconds(Int64(idleTimeout)), logger: logger,
            onListening: { address in
                let shown = address.ipAddress.map { $0.contains(":") ? "[\($0)]" : $0 } ?? "\(address)"
                StandardStreams.out("listening \(shown):\(address.port ?? 0)")
            })
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: server)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        do { try await group.run() } catch {
            StandardStreams.error("stepsign-witness: \(error)")
            throw ExitCode(1)
        }
    }

    /// `HOST:PORT` or `[IPv6]:PORT`.
    static func hostAndPort(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (0...65535).contains(port)
        else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        return (host, port)
    }
}
