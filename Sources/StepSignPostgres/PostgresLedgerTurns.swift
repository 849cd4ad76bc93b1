import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import StepSignStorage

/// The log's turn on PostgreSQL (schema v18; docs/decisions.md, "One log core"): the turns this
/// store holds, one per batch that claimed it (``LedgerCommit/claimTurn``).
///
/// A claim takes `pg_advisory_lock` on ``PostgresSchema/ledgerTurnKey`` (exclusive, for the
/// session) on a pooled connection it keeps: every other daemon's insert takes the key shared
/// first, so it waits, and PostgreSQL queues later shared requests behind the waiting
/// exclusive one, so the claimant is not starved. The batch commits on that connection; a
/// `tailMoved` answer keeps the turn for the batch computed again (nothing else can commit
/// meanwhile), any other end gives it back (`pg_advisory_unlock`, then the connection to the
/// pool). A turn not used again within ``safetyTimeout`` is given back: a claimant that gave
/// up, threw or was cancelled between its tries never holds the log. A daemon that dies
/// gives it back with its session.
final class PostgresLedgerTurns: Sendable {
    /// A turn held: its connection, and how to give it back.
    final class Held: Sendable {
        let connection: AnsweredConnection
        private let giveBack: AsyncStream<Void>.Continuation

        init(connection: AnsweredConnection, giveBack: AsyncStream<Void>.Continuation) {
            self.connection = connection
            self.giveBack = giveBack
        }

        /// Unlocks the turn and gives the connection back to the pool (once; later calls do nothing).
        func release() {
            giveBack.finish()
        }
    }

    private struct Kept: Sendable {
        let held: Held
        let timer: Task<Void, Never>
    }

    /// How long a turn kept after a `tailMoved` answer waits for its batch's next commit.
    static let safetyTimeout: Duration = .seconds(2)

    private let kept = NIOLockedValueBox<[LedgerTurnClaim: Kept]>([:])

    /// The turn kept for `claim`, taken out (its timer stopped), or nil.
    func take(_ claim: LedgerTurnClaim) -> Held? {
        guard let entry = kept.withLockedValue({ $0.removeValue(forKey: claim) }) else { return nil }
        entry.timer.cancel()
        return entry.held
    }

    /// Keeps `held` for the next commit of `claim`, for at most ``safetyTimeout``.
    func keep(_ held: Held, for claim: LedgerTurnClaim, logger: Logger) {
        let timer = Task { [kept] in
            try? await Task.sleep(for: Self.safetyTimeout)
            let expired = kept.withLockedValue { turns -> Bool in
                guard let entry = turns[claim], entry.held === held else { return false }
                turns[claim] = nil
                return true
            }
            if expired {
                logger.warning("a batch's turn on the log was not used again in time; given back",
                               metadata: ["timeoutSeconds": "\(Self.safetyTimeout.components.seconds)"])
                held.release()
            }
        }
        let previous = kept.withLockedValue { turns in
            defer { turns[claim] = Kept(held: held, timer: timer) }
            return turns[claim]
        }
        if let previous, previous.held !== held {
            previous.timer.cancel()
            previous.held.release()
        }
    }

    /// Gives back the turn kept for `claim`, if any.
    func release(_ claim: LedgerTurnClaim) {
        take(claim)?.release()
    }

    /// Takes the turn: a pooled connection that holds the turn's lock, kept out of the pool
    /// until ``Held/release()``.
    static func claim(on store: PostgresStore, logger: Logger) async throws -> Held {
        let (released, giveBack) = AsyncStream<Void>.makeStream()
        let answered = NIOLockedValueBox(false)
        return try await withCheckedThrowingContinuation { (handOut: CheckedContinuation<Held, any Error>) in
            Task {
                do {
                    try await store.withConnection { connection in
                        try await connection.query("SELECT pg_advisory_lock(\(PostgresSchema.ledgerTurnKey))", logger: logger)
                        let first = answered.withLockedValue { done in
                            defer { done = true }
                            return !done
                        }
                        if first {
                            handOut.resume(returning: Held(connection: connection, giveBack: giveBack))
                            for await _ in released {}
                        }
                        if !connection.isClosed {
                            do {
                                try await connection.query("SELECT pg_advisory_unlock(\(PostgresSchema.ledgerTurnKey))",
                                                           logger: logger)
                            } catch {
                                // A connection back in the pool still holding the turn would
                                // stall every other daemon's commit: closed instead, the
                                // session's end releases the lock.
                                logger.warning("the log's turn could not be given back; its connection is closed",
                                               metadata: ["error": "\(error)"])
                                try? await connection.connection.close()
                            }
                        }
                    }
                } catch {
                    let first = answered.withLockedValue { done in
                        defer { done = true }
                        return !done
                    }
                    if first { handOut.resume(throwing: error) }
                }
            }
        }
    }
}
