import Foundation
import StepSignClient
import Testing

/// Where a test's daemons run (SPEC §5.1: the guarantees hold however many connections, and
/// however many daemons sharing one PostgreSQL database, act at once). A test parameterised
/// over `Deployment.available` runs its attack on one daemon on SQLite and, with connections
/// spread over both, on two daemons sharing one PostgreSQL database.
enum Deployment: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite = "one daemon on SQLite"
    case postgres = "two daemons on one PostgreSQL"

    var testDescription: String { rawValue }

    /// Both, when a PostgreSQL server is set (or required: its absence then fails the tests,
    /// see ``PostgresServer/enabled``); else SQLite only.
    static var available: [Deployment] { PostgresServer.enabled ? allCases : [.sqlite] }

    /// Starts this deployment's daemons, each with `config` (TOML lines as
    /// `DaemonHarness(config:)` takes them, no top-level keys), B with `bConfig` if given.
    func start(config: String = "", bConfig: String? = nil) throws -> Cluster {
        switch self {
        case .sqlite:
            return Cluster(daemons: [try DaemonHarness(config: config)], database: nil)
        case .postgres:
            guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
            let database = try PostgresServer.createDatabase()
            do {
                let root = try ClusterRoot()
                return Cluster(daemons: try Cluster.startTwo(on: database, config: config, bConfig: bConfig, root: root),
                               database: database, root: root)
            } catch {
                database.drop()
                throw error
            }
        }
    }
}
