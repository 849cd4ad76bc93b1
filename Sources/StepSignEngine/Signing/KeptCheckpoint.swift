#if canImport(Glibc)
import Glibc
#endif
import NIOConcurrencyHelpers
import StepSignFormat
import StepSignSystem

/// The last log checkpoint this daemon signed (SPEC §5.5), kept in its state directory outside
/// the database, and the one signed for a batch of the log core that has not committed yet.
///
/// A checkpoint signed for a batch is written as `log-checkpoint.pending` (with
/// `fsync`) before the commit and becomes the kept one after it (``promote()``), or is removed
/// when the transaction fails (``drop()``). Kept before the commit, a failed commit would look
/// like a rewritten log forever; kept only after it, a crash between the two would forget a
/// checkpoint already in the database. A pending file a crash left is settled at the next
/// start (``settleLeftover(committed:)``).
///
/// Every change happens under one lock, and a checkpoint replaces the kept one only if that
/// is still the one it was proven from, so the kept checkpoint only grows.
final class KeptCheckpoint: Sendable {
    /// The kept file cannot be read or parsed.
    struct Unreadable: Error, CustomStringConvertible, ErrnoCarrying {
        var path: String
        var reason: String
        /// The failed read's errno; nil when the file was read and is not a checkpoint.
        var errno: Int32?
        var description: String { "the checkpoint kept in \(path) cannot be read: \(reason)" }
        var carriedErrno: Int32? { errno }
        var carriedPath: String? { path }

        /// Whether the read failed for a fault that may pass (EIO, EMFILE, …): the start is
        /// tried again (exit 74) rather than the log refused for a file that is fine.
        var mayPass: Bool { errno.map(TransientErrno.contains) ?? false }
    }

    private struct State {
        var loaded = false
        var kept: TransparencyLog.Signed?
        var pending: TransparencyLog.Signed?
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    let path: String
    let pendingPath: String
    private let state = NIOLockedValueBox(State())

    init(path: String) {
        self.path = path
        self.pendingPath = path + ".pending"
    }

    /// The kept checkpoint (read from its file at the first use), nil when none was signed.
    func current() throws -> TransparencyLog.Signed? {
        try state.withLockedValue { state in
            try load(&state)
            return state.kept
        }
    }

    /// The checkpoint an append's next one must extend: the pending one, else the kept one.
    func newest() throws -> TransparencyLog.Signed? {
        try state.withLockedValue { state in
            try load(&state)
            return state.pending ?? state.kept
        }
    }

    /// Keeps `signed` in place of `expected` (written with `fsync` first): false, keeping
    /// nothing, when the kept checkpoint is no longer `expected` or one is pending (the caller
    /// proves again from the newer one).
    func replace(_ expected: TransparencyLog.Signed?, with signed: TransparencyLog.Signed) throws -> Bool {
        try state.withLockedValue { state in
            try load(&state)
            guard state.pending == nil, state.kept == expected else { return false }
            try SecureFile.writeAtomically(Array(signed.note.serialized.utf8), to: path, mode: 0o600)
            state.kept = signed
            return true
        }
    }

    /// Before a batch's commit: `make` gets the newest checkpoint (pending or kept)
    /// under the lock and returns the one to sign after it, or nil to sign nothing; that one
    /// is written as the pending file (with `fsync`) before it is returned.
    func signPending(_ make: (TransparencyLog.Signed?) throws -> TransparencyLog.Signed?) throws -> TransparencyLog.Signed? {
        try state.withLockedValue { state in
            try load(&state)
            guard let signed = try make(state.pending ?? state.kept) else { return nil }
            try SecureFile.writeAtomically(Array(signed.note.serialized.utf8), to: pendingPath, mode: 0o600)
            state.pending = signed
            return signed
        }
    }

    /// After the commit: the pending checkpoint becomes the kept one (the file moved, durably)
    /// and is returned; nil when none was pending.
    func promote() throws -> TransparencyLog.Signed? {
        var failure: (any Error)?
        let (promoted, waiters) = state.withLockedValue { state -> (TransparencyLog.Signed?, [CheckedContinuation<Void, Never>]) in
            guard let pending = state.pending else { return (nil, []) }
            do { try SecureFile.move(pendingPath, to: path) } catch { failure = error }
            // Kept in memory even if the move failed: the daemon goes on proving from it.
            state.kept = pending
            state.pending = nil
            defer { state.waiters = [] }
            return (pending, state.waiters)
        }
        for waiter in waiters { waiter.resume() }
        if let failure { throw failure }
        return promoted
    }

    /// After a failed transaction: the pending checkpoint is forgotten (its file removed).
    func drop() {
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            guard state.pending != nil else { return [] }
            unlink(pendingPath)
            state.pending = nil
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once no checkpoint is pending.
    func untilNothingPending() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let now = state.withLockedValue { state in
                guard state.pending != nil else { return true }
                state.waiters.append(waiter)
                return false
            }
            if now { waiter.resume() }
        }
    }

    /// At the start: a pending file a crash left is promoted when `committed` says the store
    /// has its tree (the transaction committed, so the checkpoint may have left), else removed
    /// (it never committed, so it never left). Returns what was promoted.
    func settleLeftover(committed: (TransparencyLog.Signed) async throws -> Bool) async throws -> TransparencyLog.Signed? {
        let leftover: TransparencyLog.Signed?
        do {
            guard let read = try Self.read(pendingPath) else { return nil }
            leftover = read
        } catch let error as Unreadable where error.mayPass {
            // Not a reason to forget it: the start is tried again.
            throw error
        } catch {
            leftover = nil
        }
        guard let leftover, try await committed(leftover) else {
            unlink(pendingPath)
            return nil
        }
        try SecureFile.move(pendingPath, to: path)
        state.withLockedValue { state in
            state.kept = leftover
            state.loaded = true
        }
        return leftover
    }

    private func load(_ state: inout State) throws {
        guard !state.loaded else { return }
        state.kept = try Self.read(path)
        state.loaded = true
    }

    /// The checkpoint in `path`; nil when there is no such file.
    private static func read(_ path: String) throws -> TransparencyLog.Signed? {
        let text: String
        do {
            guard let bytes = try SecureFile.readIfPresent(path) else { return nil }
            text = String(decoding: bytes, as: UTF8.self)
        } catch {
            throw Unreadable(path: path, reason: "\(error)", errno: error.errno)
        }
        do {
            let note = try SignedNote(parsing: text)
            return TransparencyLog.Signed(note: note, checkpoint: try LogCheckpoint(text: note.text))
        } catch {
            throw Unreadable(path: path, reason: "\(error)")
        }
    }
}
