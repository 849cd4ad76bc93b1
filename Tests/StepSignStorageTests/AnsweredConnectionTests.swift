import Foundation
import Logging
import PostgresNIO
@testable import StepSignPostgres
import Testing

/// A statement on a connection that closes is answered, however the closing and the statement
/// interleave (PostgresNIO 1.33 alone leaves a statement written after the close unanswered
/// for good; the ledger writer waiting on one stopped every signing).
// The limit is generous: in the whole suite the cooperative pool is shared with blocking tests and
// these waited up to five minutes for a thread; a statement that is never answered still fails it.
@Suite(.enabled(if: PostgresTestServer.enabled), .timeLimit(.minutes(10)))
struct AnsweredConnectionTests {
    let logger = Logger(label: "stepsign.tests.answered")

    func connect() async throws -> PostgresConnection {
        let settings = try PostgresTestServer.requireSettings()
        let configuration = PostgresConnection.Configuration(
            unixSocketPath: settings.socketDirectory + "/.s.PGSQL.5432", username: settings.user, password: nil,
            database: settings.database
        )
        return try await PostgresConnection.connect(configuration: configuration, id: 7, logger: logger)
    }

    @Test("a statement on a connection closed already gets unavailable")
    func closedAlready() async throws {
        let connection = try await connect()
        let answered = AnsweredConnection(watching: connection)
        try await answered.query("SELECT 1", logger: logger)
        try await connection.close()
        await #expect(throws: PostgresStoreError.self) { try await answered.query("SELECT 1", logger: logger) }
    }

    @Test("statements racing the connection's close are all answered")
    func racingTheClose() async throws {
        for round in 0..<100 {
            let connection = try await connect()
            let answered = AnsweredConnection(watching: connection)
            let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        do {
                            try await answered.query("SELECT 1", logger: logger)
                            return true
                        } catch {
                            return false
                        }
                    }
                }
                // Close at a different point of the statements' way in each round.
                if round % 4 != 0 { await Task.yield() }
                try await connection.close()
                var outcomes: [Bool] = []
                for try await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
            #expect(outcomes.count == 8)
            // After the close, nothing more is answered by the server.
            await #expect(throws: PostgresStoreError.self) { try await answered.query("SELECT 1", logger: logger) }
        }
    }

    @Test("a statement in progress when the server ends the backend gets an error")
    func backendTerminated() async throws {
        let connection = try await connect()
        let answered = AnsweredConnection(watching: connection)
        let pid = try await answered.query("SELECT pg_backend_pid()", logger: logger).decode(Int32.self)
            .first { _ in true } ?? 0
        let sleeping = Task {
            for try await _ in try await answered.query("SELECT pg_sleep(60)", logger: logger) {}
        }
        try await Task.sleep(for: .milliseconds(300))
        try await PostgresTestServer.administer("SELECT pg_terminate_backend(\(pid))")
        await #expect(throws: (any Error).self) { try await sleeping.value }
        try? await connection.close()
    }

    @Test("the store watches each pooled connection once and forgets it when it closes")
    func closingsForgetClosedConnections() async throws {
        let closings = ConnectionClosings()
        let connection = try await connect()
        let first = closings.closing(of: connection)
        #expect(closings.closing(of: connection) === first)
        #expect(closings.count == 1)
        try await closings.answered(connection).query("SELECT 1", logger: logger)
        try await connection.close()
        // The closing's callback runs on the connection's event loop after the close.
        try await connection.eventLoop.submit {}.get()
        #expect(closings.count == 0)
    }
}
