import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

/// stepsign-loadgen: the load generator of `scripts/bench`.
///
/// Plain POSIX: Unix stream sockets on this machine only, one thread, epoll. Every mode is
/// bounded in request count and in time. It prints one line of `key=value` pairs, including its
/// own CPU time (getrusage), so that a slow client is not mistaken for a slow server.
@main
struct LoadgenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stepsign-loadgen",
        abstract: "The load generator of scripts/bench (not installed).",
        discussion: """
            `sign` speaks stepsign's line protocol (level-0 authenticateUserAndSignData); `agent` speaks the \
            ssh-agent protocol (SSH_AGENTC_SIGN_REQUEST with the agent's first key). Each connection keeps at \
            most --window requests in flight. `sign` takes several sockets separated by commas (several \
            daemons): connection i goes to socket i mod count, and the reply counts per socket are printed \
            as completed_per_socket.
            """,
        subcommands: [SignCommand.self, AgentCommand.self, Level1Command.self, ES256Command.self, HoldCommand.self,
                      AttackCommand.self, VerifyProofsCommand.self, WitnessLoadCommand.self, ReuseCommand.self,
                      BatchCommand.self]
    )
}

/// The options of the pipelined modes (`sign`, `agent`).
struct LoadOptions: ParsableArguments {
    @Option(help: "The socket path; for sign, several separated by commas.")
    var socket: String
    @Option(help: "Connections to open.")
    var connections: Int
    @Option(help: "Requests in flight per connection.")
    var window = 1
    @Option(help: "Stop after this many requests.")
    var requests = 1_000_000
    @Option(help: "Stop sending after this many seconds.")
    var seconds = 5.0
    @Option(name: .customLong("payload-bytes"), help: "Bytes of payload per request.")
    var payloadBytes = 200

    /// The socket paths, checked.
    func socketPaths() throws -> [String] {
        let paths = socket.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard !paths.contains(where: \.isEmpty) else { throw ValidationError("--socket: an empty path") }
        return paths
    }

    /// Runs the load with `proto` and prints the result line of `mode`.
    func run(_ mode: String, paths: [String], proto: some WireProtocol, clock: RunClock) {
        signal(SIGPIPE, SIG_IGN)
        let result = runLoad(socketPaths: paths, connections: connections, window: window, requests: requests,
                             seconds: seconds, proto: proto)
        clock.report([("mode", mode)] + loadFields(result, connections: connections, window: window))
    }
}

/// `sign`: level-0 signing requests, pipelined.
struct SignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sign", abstract: "Level-0 signing over stepsign's line protocol.")
    @OptionGroup var load: LoadOptions
    @Option(help: "The user to sign for.")
    var user = "bench"

    func run() throws {
        let clock = RunClock()
        let paths = try load.socketPaths()
        load.run("sign", paths: paths, proto: StepSignLineProtocol(user: user, payloadBytes: load.payloadBytes), clock: clock)
    }
}

/// `agent`: SSH_AGENTC_SIGN_REQUEST with the agent's first key, pipelined.
struct AgentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "agent", abstract: "Signing over the ssh-agent protocol.")
    @OptionGroup var load: LoadOptions
    @Option(help: "Sign SSHSIG blobs of this namespace (as ssh-keygen -Y sign and git do; what stepsign's agent signs) instead of the raw payload.")
    var namespace: String?

    func run() throws {
        let clock = RunClock()
        let paths = try load.socketPaths()
        guard paths.count == 1 else { throw ValidationError("agent takes one --socket") }
        signal(SIGPIPE, SIG_IGN)
        let proto = AgentProtocol(keyBlob: AgentProtocol.firstKey(socket: paths[0]), payloadBytes: load.payloadBytes,
                                  namespace: namespace)
        load.run("agent", paths: paths, proto: proto, clock: clock)
    }
}
