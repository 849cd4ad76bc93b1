import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import StepSignCrypto
import StepSignStorage
import StepSignMetrics

/// The shared ``StepSignStore``: one PostgreSQL database for several daemons (SPEC §5.2).
///
/// Every call is `async` on PostgresNIO's event loops and holds no thread while it waits on
/// the server. Each atomic primitive is one statement or one transaction on the server (row
/// locks, `ON CONFLICT`, `DELETE … RETURNING`); nothing is cached that another daemon could
/// change: the ledger's tail is read under a transaction-scoped advisory lock in the
/// transaction that extends it.
///
/// Life cycle: ``open(_:seal:logger:pool:)`` brings the schema up to date on one connection of
/// its own, then makes the connection pool (PostgresNIO's `PostgresClient`, at most `poolSize`
/// connections) and returns the store. Who runs the pool is ``PoolRunner``: a command that
/// opens the store, uses it and closes it lets the store run it in a task of its own until
/// ``close()``; stepsignd runs it with ``runPool()`` as the first service of its service group,
/// so the group starts it before anything uses the store and stops it after everything that
/// does (issue 40). Calls after the pool ends fail.
public final class PostgresStore: StepSignStore {
    /// Every daemon on the database changes credentials here.
    public var isShared: Bool { true }

    let client: PostgresClient
    let logger: Logger
    /// The key of the HMAC under which names that are not users are counted (shared by every
    /// daemon, so one name has one counter).
    let nameKey: [UInt8]
    /// The seal of the credential records (SPEC §5.4): one key for every daemon on the database.
    let credentialSeal: CredentialSeal
    /// The longest a call waits for a pooled connection (``PostgresStoreConfiguration/leaseTimeout``).
    let leaseTimeout: Duration
    /// When the pool last handed out a connection: a call that waits `leaseTimeout` fails only
    /// if no other call got one meanwhile (the server is away, not the pool busy).
    private let lastLease = NIOLockedValueBox<ContinuousClock.Instant>(.now)
    /// ``PostgresStoreConfiguration/commitResolutionTimeout``.
    let commitResolutionTimeout: Duration
    /// The pool's run when the store runs it (``PoolRunner/store``); nil when the caller does.
    private let runTask: Task<Void, Never>?
    /// The pooled connections' closings, which answer statements PostgresNIO would not.
    let closings = ConnectionClosings()
    /// The log's turns this store holds (schema v18).
    let ledgerTurns = PostgresLedgerTurns()
    /// Whether a commit may claim the log's turn: a pool of two connections at least, since a
    /// turn keeps one while the batch reads the other daemons' entries on another.
    let claimsTurns: Bool

    /// Who runs a store's connection pool.
    public enum PoolRunner: Sendable {
        /// The store, in a task of its own from ``open(_:seal:logger:pool:)`` to ``close()``: for a
        /// command that opens the store, uses it and closes it (`stepsignd --migrate-to`, tests).
        case store
        /// The caller, with ``runPool()``: stepsignd, as a service of its service group. Calls
        /// made before it runs wait for it, as for a busy pool (at most the lease timeout);
        /// ``close()`` leaves the pool to the caller.
        case caller
    }

    private init(client: PostgresClient, runTask: Task<Void, Never>?, logger: Logger, nameKey: [UInt8],
                 seal: CredentialSeal, leaseTimeout: Duration, commitResolutionTimeout: Duration, poolSize: Int) {
        self.client = client
        self.claimsTurns = poolSize >= 2
        self.runTask = runTask
        self.logger = logger
        self.nameKey = nameKey
        self.credentialSeal = seal
        self.leaseTimeout = leaseTimeout
        self.commitResolutionTimeout = commitResolutionTimeout
    }

    /// Connects, applies missing migrations (safely when several daemons start at once) and
    /// returns the store. `seal` seals and checks the credential records: the cluster's one
    /// seal key (`storage.seal_key_file` or the credential `stepsign-seal-key`).
    ///
    /// Throws ``PostgresStoreError/schemaTooNew(found:supported:)`` when a newer daemon has
    /// migrated the database, ``PostgresStoreError/configuration(_:)`` or
    /// ``PostgresStoreError/passwordFile(path:reason:)`` for unusable settings, and
    /// ``PostgresStoreError/unavailable(_:)`` when the server cannot be reached.
    public static func open(_ configuration: PostgresStoreConfiguration, seal: CredentialSeal,
                            logger: Logger = Logger(label: "stepsign.postgres", factory: { _ in SwiftLogNoOpLogHandler() }),
                            pool: PoolRunner = .store) async throws -> PostgresStore {
        try configuration.validate()
        let password = try configuration.readPassword()
        // The schema is brought up to date on one connection of its own, before any pool
        // exists: a server that cannot be reached, or refuses the login, is reported at once
        // (the pool would retry it for about a minute).
        let connectionConfiguration = try singleConnectionConfiguration(configuration, password: password)
        let nameKey: [UInt8]
        do {
            let connection = try await PostgresConnection.connect(configuration: connectionConfiguration, id: 0, logger: logger)
            do {
                nameKey = try await PostgresMigrator(logger: logger).migrate(on: AnsweredConnection(watching: connection), seal: seal)
            } catch {
                try? await connection.close()
                throw error
            }
            try await connection.close()
        } catch {
            throw mapped(error)
        }

        var clientConfiguration: PostgresClient.Configuration
        if configuration.usesUnixSocket {
            clientConfiguration = PostgresClient.Configuration(
                unixSocketPath: configuration.unixSocketPath, username: configuration.user,
                password: password, database: configuration.database
            )
        } else {
            let tls: PostgresClient.Configuration.TLS = if let tlsConfiguration = try tlsConfiguration(configuration) {
                .require(tlsConfiguration)
            } else {
                .disable
            }
            clientConfiguration = PostgresClient.Configuration(
                host: configuration.host, port: configuration.port, username: configuration.user,
                password: password, database: configuration.database, tls: tls
            )
        }
        clientConfiguration.options.maximumConnections = configuration.poolSize
        clientConfiguration.options.minimumConnections = 0
        clientConfiguration.options.connectTimeout = configuration.connectTimeout
        let client = PostgresClient(configuration: clientConfiguration, backgroundLogger: logger)
        let runTask: Task<Void, Never>? = switch pool {
        case .store: Task { await client.run() }
        case .caller: nil
        }
        return PostgresStore(client: client, runTask: runTask, logger: logger, nameKey: nameKey, seal: seal,
                             leaseTimeout: configuration.leaseTimeout,
                             commitResolutionTimeout: configuration.commitResolutionTimeout, poolSize: configuration.poolSize)
    }

    /// The settings of one connection (not a pool's) to the configured server, with the
    /// connect timeout: what `open` migrates on and `stepsignd --check` reads the schema on.
    static func singleConnectionConfiguration(_ configuration: PostgresStoreConfiguration,
                                              password: String?) throws -> PostgresConnection.Configuration {
        var connectionConfiguration: PostgresConnection.Configuration
        if configuration.usesUnixSocket {
            connectionConfiguration = PostgresConnection.Configuration(
                unixSocketPath: configuration.unixSocketPath, username: configuration.user,
                password: password, database: configuration.database
            )
        } else {
            let tls: PostgresConnection.Configuration.TLS
            if let tlsConfiguration = try tlsConfiguration(configuration) {
                do {
                    tls = .require(try NIOSSLContext(configuration: tlsConfiguration))
                } catch {
                    throw PostgresStoreError.configuration("TLS cannot be set up: \(error)")
                }
            } else {
                tls = .disable
            }
            connectionConfiguration = PostgresConnection.Configuration(
                host: configuration.host, port: configuration.port, username: configuration.user,
                password: password, database: configuration.database, tls: tls
            )
            // tlsServerName stays nil: PostgresNIO then sends `host` as the SNI name unless it is
            // an IP address (which SNI cannot carry), and NIOSSL's verify-full checks the
            // certificate against the name, or against the address connected to for an IP.
        }
        let timeout = configuration.connectTimeout.components
        connectionConfiguration.options.connectTimeout = .nanoseconds(
            timeout.seconds * 1_000_000_000 + timeout.attoseconds / 1_000_000_000
        )
        return connectionConfiguration
    }

    /// The TLS settings of `tls`, or nil for `disable`.
    private static func tlsConfiguration(_ configuration: PostgresStoreConfiguration) throws -> TLSConfiguration? {
        switch configuration.tls {
        case .disable:
            return nil
        case .require:
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.certificateVerification = .none
            return tls
        case .verifyFull:
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.certificateVerification = .fullVerification
            if let caFile = configuration.tlsCAFile, !caFile.isEmpty {
                do {
                    tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
                } catch {
                    throw PostgresStoreError.configuration("tls_ca_file \(caFile) cannot be read as PEM certificates")
                }
            }
            return tls
        }
    }

    /// Ends the pool the store runs (``PoolRunner/store``) once its connections are closed; a
    /// pool the caller runs is left to the caller, whose run of ``runPool()`` ends it.
    public func close() async throws {
        guard let runTask else { return }
        runTask.cancel()
        await runTask.value
    }

    /// Runs the connection pool of a store opened with ``PoolRunner/caller``, once, until the
    /// calling task is cancelled or, in a swift-service-lifecycle `ServiceGroup`, told to shut
    /// down gracefully (PostgresNIO's `PostgresClient.run()`, which is a `Service`'s): then it
    /// closes every connection, so nothing may use the store after it.
    package func runPool() async {
        precondition(runTask == nil, "the store runs its pool itself (PoolRunner.store)")
        await client.run()
    }

    // MARK: - Running statements

    /// Runs `body` on one pooled connection, with server and connection errors as
    /// ``PostgresStoreError``s (``StorageError``s pass through).
    ///
    /// The wait for a connection is bounded by `leaseTimeout`: while the server is down the
    /// pool keeps retrying to connect and would hold the call for up to a minute (its circuit
    /// breaker); here a call that has waited `leaseTimeout` while no call got a connection
    /// fails as ``PostgresStoreError/unavailable(_:)``, so the request gets error 15 in bounded
    /// time. A pool that is only busy (other calls get connections) is waited for. Once `body` has its connection it is never
    /// cancelled (a statement cut off halfway, a `COMMIT` above all, would be worse).
    func withConnection<T: Sendable>(_ body: (AnsweredConnection) async throws -> T) async throws -> T {
        do {
            return try await withoutActuallyEscaping(body) { body in
                let work = LeasedWork(body)
                let client = self.client
                let timeout = self.leaseTimeout
                let lastLease = self.lastLease
                let closings = self.closings
                let asked = ContinuousClock.now
                return try await withThrowingTaskGroup(of: LeaseOutcome<T>.self) { group in
                    group.addTask {
                        .value(try await client.withConnection { connection in
                            StepSignMetric.postgresPoolWaitSeconds.observe(ContinuousClock.now - asked)
                            guard work.begin() else { throw CancellationError() }
                            lastLease.withLockedValue { $0 = .now }
                            return try await work.body(closings.answered(connection))
                        })
                    }
                    group.addTask {
                        // A busy pool (others get connections) is waited for; a pool that
                        // hands out nothing for `timeout` fails the call.
                        while true {
                            try? await Task.sleep(for: timeout)
                            if Task.isCancelled { return .timerDone }
                            let idle = lastLease.withLockedValue { $0 }.duration(to: .now)
                            if idle < timeout { continue }
                            if work.expire() {
                                throw PostgresStoreError.unavailable("no connection to the server within \(timeout)")
                            }
                            return .timerDone
                        }
                    }
                    while let outcome = try await group.next() {
                        if case let .value(value) = outcome {
                            group.cancelAll()
                            return value
                        }
                    }
                    throw CancellationError()
                }
            }
        } catch {
            throw Self.mapped(error)
        }
    }

    /// Runs `body` in one transaction (`BEGIN` … `COMMIT`, rolled back if it throws). A
    /// deadlock or serialization failure, which the server resolves by aborting one side, is
    /// retried a few times from the start.
    func inTransaction<T: Sendable>(_ body: (AnsweredConnection) async throws -> T) async throws -> T {
        do {
            return try await transaction(body)
        } catch let interrupted as CommitInterrupted {
            throw interrupted.error
        }
    }

    /// ``inTransaction(_:)``, but a `COMMIT` whose answer was lost with the connection
    /// throws ``CommitInterrupted``: the transaction may or may not have been committed.
    func transaction<T: Sendable>(_ body: (AnsweredConnection) async throws -> T) async throws -> T {
        try await transaction(on: nil, body)
    }

    /// `body` on `held` (a connection the caller keeps, such as the log's turn's), or on a
    /// pooled one (``withConnection(_:)``) when it is nil.
    func onConnection<T: Sendable>(_ held: AnsweredConnection?, _ body: (AnsweredConnection) async throws -> T) async throws -> T {
        guard let held else { return try await withConnection(body) }
        do {
            return try await body(held)
        } catch {
            throw Self.mapped(error)
        }
    }

    /// ``transaction(_:)`` on `held` when it is not nil, else on a pooled connection (see
    /// ``onConnection(_:_:)``).
    func transaction<T: Sendable>(on held: AnsweredConnection?, _ body: (AnsweredConnection) async throws -> T) async throws -> T {
        try await retryingAbortedByServer {
            try await onConnection(held) { connection in
                if held != nil { try Self.ensureOpen(connection) }
                try await connection.query("BEGIN", logger: logger)
                let value: T
                do {
                    value = try await body(connection)
                } catch {
                    if !connection.isClosed { _ = try? await connection.query("ROLLBACK", logger: logger) }
                    throw error
                }
                try await Self.committing(connection) { try await connection.query("COMMIT", logger: logger) }
                return value
            }
        }
    }

    /// `body`, retried a few times from the start when the server aborted it to resolve a
    /// deadlock or a serialization failure (nothing of it took effect).
    func retryingAbortedByServer<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await body()
            } catch let error as PostgresStoreError {
                if case let .server(sqlState, _) = error, sqlState == SQLState.deadlockDetected || sqlState == SQLState.serializationFailure, attempt < 5 {
                    continue
                }
                throw error
            }
        }
    }

    /// Sends a statement that commits (`COMMIT`, or a call that commits inside) on
    /// `connection`: closed before it was sent, it certainly did not take effect; the server's
    /// own refusal is an answer (rolled back); a connection broken or shut down before the
    /// answer throws ``CommitInterrupted``, the outcome unknown.
    @discardableResult
    static func committing<T>(_ connection: AnsweredConnection, _ statement: () async throws -> T) async throws -> T {
        try ensureOpen(connection)
        do {
            return try await statement()
        } catch {
            let error = mapped(error)
            switch error as? PostgresStoreError {
            case .unavailable?, .closed?: throw CommitInterrupted(error: error)
            default: throw error
            }
        }
    }

    /// Throws ``PostgresStoreError/unavailable(_:)`` if `connection` is closed: a statement
    /// not sent (a `COMMIT` above all) certainly did not take effect.
    static func ensureOpen(_ connection: AnsweredConnection) throws {
        if connection.isClosed { throw PostgresStoreError.unavailable("the connection to the server is closed") }
    }

    /// A PostgresNIO error as a ``PostgresStoreError``, without the query's bound values.
    static func mapped(_ error: any Error) -> any Error {
        if error is StorageError || error is PostgresStoreError || error is CancellationError || error is ForwardedError
            || error is CommitInterrupted {
            return error
        }
        guard let error = error as? PSQLError else {
            // The pool's own errors (a circuit breaker tripped by failed connects, a timeout).
            return PostgresStoreError.unavailable("\(error)")
        }
        switch error.code {
        case .server:
            let state = error.serverInfo?[.sqlState] ?? "?????"
            if state == SQLState.revokedSigningKey {
                // Raised by the ledger's triggers, with the key's id as the detail.
                return StorageError.signingKeyRevoked(error.serverInfo?[.detail] ?? "")
            }
            // Class 08 (connection exception), 57P01-03 (shutdown), 53 (resources).
            if state.hasPrefix(SQLState.connectionExceptionClass) || state.hasPrefix(SQLState.serverShutdownPrefix)
                || state.hasPrefix(SQLState.insufficientResourcesClass) {
                return PostgresStoreError.unavailable(error.serverInfo?[.message] ?? "server error \(state)")
            }
            return PostgresStoreError.server(sqlState: state, message: error.serverInfo?[.message] ?? "")
        case .poolClosed, .clientClosedConnection:
            return PostgresStoreError.closed
        case .sslUnsupported:
            return PostgresStoreError.tls("the server does not offer TLS (it answered the SSL request with N)")
        case .failedToAddSSLHandler:
            return PostgresStoreError.tls("TLS cannot be set up\(error.underlying.map { ": \($0)" } ?? "")")
        default:
            // A handshake that TLS itself fails (a certificate that does not verify, a host name
            // that does not match, no common protocol) fails the same way on every retry; one
            // cut short by the network (a reset, a close) is only unavailable.
            if let underlying = error.underlying {
                if let ssl = underlying as? NIOSSLError, case .handshakeFailed(.sslError) = ssl {
                    return PostgresStoreError.tls("the TLS handshake failed: \(ssl)")
                }
                if let extra = underlying as? NIOSSLExtraError, extra == .failedToValidateHostname {
                    // (NIOSSL's own text names no host when `host` is an IP address.)
                    return PostgresStoreError.tls(
                        "the server's certificate is not for `host`: its subjectAltName lists neither that name nor that address")
                }
            }
            let underlying = error.underlying.map { ": \($0)" } ?? ""
            return PostgresStoreError.unavailable("\(error.code)\(underlying)")
        }
    }

    /// The number of rows a statement returned (its `RETURNING` rows).
    static func count(_ rows: PostgresRowSequence) async throws -> Int {
        var count = 0
        for try await _ in rows { count += 1 }
        return count
    }

    /// The HMAC under which a name that is not a user is counted.
    func key(of name: String) -> [UInt8] {
        HMACSHA256.mac(key: nameKey, message: Array(name.utf8))
    }

    /// A read value that does not have the column's expected form.
    static func malformed(_ table: String, _ error: any Error) -> StorageError {
        StorageError.malformedRow(table: table, detail: "\(error)")
    }
}

/// A transaction's `COMMIT` was sent and its answer lost with the connection (`error`): the
/// transaction may or may not have been committed.
struct CommitInterrupted: Error {
    let error: any Error
}

/// What a bounded ``PostgresStore/withConnection(_:)`` child task yields.
enum LeaseOutcome<T: Sendable>: Sendable {
    case value(T)
    case timerDone
}

/// The body of a bounded ``PostgresStore/withConnection(_:)``, and who came first: the body
/// (it got a connection) or the timer (the wait is over). Exactly one of them wins.
final class LeasedWork<T>: @unchecked Sendable {
    let body: (AnsweredConnection) async throws -> T
    private let state = NIOLockedValueBox<State>(.waiting)

    private enum State {
        case waiting, started, expired
    }

    init(_ body: @escaping (AnsweredConnection) async throws -> T) {
        self.body = body
    }

    /// The body got its connection; false if the wait had expired already.
    func begin() -> Bool {
        state.withLockedValue { state in
            guard state == .waiting else { return false }
            state = .started
            return true
        }
    }

    /// The wait is over; true if the body had not started (the call then fails).
    func expire() -> Bool {
        state.withLockedValue { state in
            guard state == .waiting else { return false }
            state = .expired
            return true
        }
    }
}

/// Times as `timestamptz` keeps them: whole microseconds (PostgresNIO's encoding), so that a
/// value returned before it is stored equals the value read back.
extension Date {
    var postgresRounded: Date {
        let start = Date(timeIntervalSince1970: 946_684_800)
        let microseconds = Int64(timeIntervalSince(start) * 1_000_000)
        return Date(timeInterval: Double(microseconds) / 1_000_000, since: start)
    }
}
