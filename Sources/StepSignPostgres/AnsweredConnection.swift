import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// A `PostgresConnection` whose every statement is answered: by the server, or with
/// ``PostgresStoreError/unavailable(_:)`` once the connection has closed.
///
/// PostgresNIO 1.33 hands a statement to its channel without a promise
/// (`channel.write(…, promise: nil)`): a statement written just after the channel closed is
/// dropped, its failure with it, and its caller waits forever. Checking `isClosed` first only
/// narrows that window (the connection can close between the check and the write), and the
/// ledger writer stuck on one such statement stops every signing of the daemon. Here each
/// statement also waits on the connection's closing: whichever comes first answers it.
///
/// A statement answered by the server just before the connection closed may be reported as
/// unavailable (the closing came first): for a `COMMIT` that is an interrupted commit, whose
/// outcome ``PostgresStore/resolveInterruptedCommit(_:cause:)`` looks up.
struct AnsweredConnection: Sendable {
    let connection: PostgresConnection
    let closing: ConnectionClosing

    /// Wraps `connection`, watching its closing through `closing`, which is that connection's
    /// own (``ConnectionClosings/closing(of:)``).
    init(_ connection: PostgresConnection, closing: ConnectionClosing) {
        self.connection = connection
        self.closing = closing
    }

    /// Wraps a connection of its own (not pooled): its closing is watched from here on.
    init(watching connection: PostgresConnection) {
        self.init(connection, closing: ConnectionClosing(connection))
    }

    var isClosed: Bool { connection.isClosed }

    /// `PostgresConnection.query`, answered by the server or by the connection's closing.
    @discardableResult
    func query(_ query: PostgresQuery, logger: Logger,
               file: String = #fileID, line: Int = #line) async throws -> PostgresRowSequence {
        let connection = self.connection
        let closing = self.closing
        return try await withCheckedThrowingContinuation { continuation in
            guard let ticket = closing.wait(continuation) else { return }
            // The statement runs in a task of its own so that the closing can answer first; a
            // statement PostgresNIO dropped leaves that task (and its promise) waiting for good.
            Task {
                let result: Result<PostgresRowSequence, any Error>
                do {
                    result = .success(try await connection.query(query, logger: logger, file: file, line: line))
                } catch {
                    result = .failure(error)
                }
                closing.answer(ticket, with: result)
            }
        }
    }
}

/// The statements waiting on one connection, failed together when it closes.
final class ConnectionClosing: Sendable {
    private let state = NIOLockedValueBox(State())

    private struct State {
        var closed = false
        var nextTicket: UInt64 = 0
        var waiting: [UInt64: CheckedContinuation<PostgresRowSequence, any Error>] = [:]
    }

    /// Watches `connection`'s closing; `onClose` runs once it has closed and the waiting
    /// statements have been failed.
    init(_ connection: PostgresConnection, onClose: (@Sendable () -> Void)? = nil) {
        connection.closeFuture.whenComplete { [self] _ in
            self.close()
            onClose?()
        }
    }

    /// Registers a statement's continuation; nil (and the continuation failed) if the
    /// connection has closed already.
    func wait(_ continuation: CheckedContinuation<PostgresRowSequence, any Error>) -> UInt64? {
        let ticket: UInt64? = state.withLockedValue { state in
            guard !state.closed else { return nil }
            state.nextTicket += 1
            state.waiting[state.nextTicket] = continuation
            return state.nextTicket
        }
        if ticket == nil { continuation.resume(throwing: Self.closedError) }
        return ticket
    }

    /// The server's answer (or PostgresNIO's error) for `ticket`, unless the closing answered
    /// it first.
    func answer(_ ticket: UInt64, with result: Result<PostgresRowSequence, any Error>) {
        state.withLockedValue { $0.waiting.removeValue(forKey: ticket) }?.resume(with: result)
    }

    private func close() {
        let waiting = state.withLockedValue { state in
            state.closed = true
            defer { state.waiting = [:] }
            return state.waiting.values
        }
        for continuation in waiting { continuation.resume(throwing: Self.closedError) }
    }

    static var closedError: PostgresStoreError {
        .unavailable("the connection to the server closed before the statement was answered")
    }
}

/// One ``ConnectionClosing`` per open pooled connection, made on its first lease and dropped
/// when it closes (one callback on each connection's `closeFuture`, not one per lease).
final class ConnectionClosings: Sendable {
    private let closings = NIOLockedValueBox<[ObjectIdentifier: ConnectionClosing]>([:])

    /// `connection` with its statements answered by its closing too.
    func answered(_ connection: PostgresConnection) -> AnsweredConnection {
        AnsweredConnection(connection, closing: closing(of: connection))
    }

    func closing(of connection: PostgresConnection) -> ConnectionClosing {
        let key = ObjectIdentifier(connection)
        if let closing = closings.withLockedValue({ $0[key] }) { return closing }
        // Made outside the lock: a connection closed already runs `onClose` at once.
        let made = ConnectionClosing(connection) { [closings] in
            closings.withLockedValue { _ = $0.removeValue(forKey: key) }
        }
        return closings.withLockedValue { closings in
            if let existing = closings[key] { return existing }
            if connection.isClosed { return made }
            closings[key] = made
            return made
        }
    }

    /// The connections watched now (for tests).
    var count: Int { closings.withLockedValue { $0.count } }
}
