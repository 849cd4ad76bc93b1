#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import StepSignSystem
import Logging
import NIOCore
import ServiceLifecycle
import StepSignConfig
import StepSignFormat
import StepSignVersion
import StepSignWitness

/// `stepsign-witnessd --config FILE [--socket PATH] [--interval SECONDS] [--once]`: submits the
/// log's checkpoints to the `[[witness]]`es of FILE and stores their cosignatures (SPEC §5.6).
struct StepSignWitnessd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stepsign-witnessd",
        abstract: "Submit stepsignd's checkpoints to its witnesses (C2SP tlog-witness v1) and store their cosignatures.",
        discussion: """
            It reads [[witness]] and [server] socket from the daemon's configuration file and \
            talks to stepsignd as an admin peer (its uid in admin_uids or a group in \
            admin_groups). Each round offers the log's head to every witness with a \
            consistency proof from the size the witness last cosigned.

            Exit status (--once): 0 every witness cosigned the head (or had); 1 an alarm (a \
            witness refused for a reason a retry cannot change, or its cosignature did not \
            verify); 75 a witness or stepsignd could not be reached. Without --once it runs \
            until SIGTERM or SIGINT and exits 0. 78: a bad configuration.
            """,
        version: StepSignVersion.current
    )

    @Option(help: "The daemon's configuration file.")
    var config: String = "/etc/stepsign/stepsignd.toml"

    @Option(help: "The daemon's socket (default: [server] socket of the configuration).")
    var socket: String?

    @Option(help: "Seconds between rounds.")
    var interval: Int = 10

    @Option(help: "Seconds a witness has to answer.")
    var timeout: Int = 10

    @Flag(help: "One round, a JSON line per witness on standard output, and exit.")
    var once = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "notice"

    func run() async throws {
        guard interval > 0, timeout > 0 else { throw ValidationError("--interval and --timeout are positive") }
        guard StandardErrorLogging.bootstrap(level: logLevel) != nil else { throw ValidationError("unknown --log-level \(logLevel)") }
        let logger = Logger(label: "stepsign-witnessd")
        let settings: StepSignConfiguration
        var targets: [WitnessTarget] = []
        do {
            settings = try StepSignConfiguration.load(contentsOf: config)
            for witness in settings.witnesses {
                targets.append(WitnessTarget(name: witness.name, url: witness.url, key: try NoteVerifierKey(witness.key)))
            }
        } catch {
            StandardStreams.error("stepsign-witnessd: \(error)")
            throw ExitCode(78)
        }
        guard !targets.isEmpty else {
            StandardStreams.error("stepsign-witnessd: \(config) configures no [[witness]]")
            throw ExitCode(78)
        }
        let pusher = WitnessPusher(targets: targets, link: DaemonLink(socketPath: socket ?? settings.server.socket),
                                   interval: .seconds(interval), requestTimeout: .seconds(Int64(timeout)), logger: logger)
        if once {
            let outcomes = await pusher.round()
            try await pusher.close()
            for outcome in outcomes { StandardStreams.out(String(decoding: outcome.json.jsonBytes, as: UTF8.self)) }
            if outcomes.contains(where: { $0.kind == .alarm }) { throw ExitCode(1) }
            if outcomes.contains(where: { $0.kind == .retry || $0.kind == .waiting }) { throw ExitCode(75) }
            return
        }
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: pusher)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
