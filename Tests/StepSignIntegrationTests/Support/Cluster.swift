import Foundation
import StepSignClient
import StepSignTestSupport

/// The daemons of one test: one (SQLite) or two sharing a database (PostgreSQL), each with
/// its own state directory, socket and `instance`. Stops them and drops the database when
/// it goes away.
final class Cluster: @unchecked Sendable {
    let daemons: [DaemonHarness]
    let database: PostgresServer.Database?
    /// The cluster root that endorsed the daemons' keys (two daemons), kept until the end.
    let root: ClusterRoot?

    init(daemons: [DaemonHarness], database: PostgresServer.Database?, root: ClusterRoot? = nil) {
        self.daemons = daemons
        self.database = database
        self.root = root
    }

    /// The first daemon.
    var a: DaemonHarness { daemons[0] }
    /// The second daemon (the first again on SQLite).
    var b: DaemonHarness { daemons[daemons.count - 1] }

    /// The daemon the `index`th connection of a test uses: alternately A and B.
    func daemon(_ index: Int) -> DaemonHarness { daemons[index % daemons.count] }

    /// A new connection to ``daemon(_:)``.
    func connect(_ index: Int) throws -> StepSignConnection { try daemon(index).connect() }

    /// Stops every daemon (SIGTERM) and starts it again.
    func restart() throws {
        for daemon in daemons { daemon.stop() }
        for daemon in daemons { try daemon.start() }
    }

    /// Two daemons, `instance` "host-a" and "host-b", on `database`; B with `bConfig` if given.
    /// Unless `root` is nil, both trust `root` (`[cluster] root_key`) and it endorses each
    /// one's key, as an operator sets a cluster up (SPEC §5.4).
    static func startTwo(on database: PostgresServer.Database, config: String, bConfig: String? = nil,
                         root: ClusterRoot?) throws -> [DaemonHarness] {
        let trust = root?.config ?? ""
        let a = try DaemonHarness(config: "instance = \"host-a\"\n" + database.config + "\n" + trust + config)
        let b = try DaemonHarness(config: "instance = \"host-b\"\n" + database.config + "\n" + trust + (bConfig ?? config))
        try root?.endorse([(a, "host-a"), (b, "host-b")])
        return [a, b]
    }

    deinit {
        for daemon in daemons { daemon.stop(signal: SIGKILL) }
        database?.drop()
    }
}
