import NIOConcurrencyHelpers
import StepSignProtocol
import NIOCore
import NIOPosix

/// Runs the expensive checks (scrypt, for passwords and activation codes) on a fixed number of
/// worker threads, fairly between peer uids (SPEC §7).
///
/// A peer uid may have at most `limit` checks admitted (waiting or running); one more is
/// refused with error 14 before anything else happens, so it costs no attempt and no scrypt.
/// Waiting checks are queued per uid, and a free worker goes to the uid served least recently,
/// so a uid that floods answers delays another uid's check by at most the checks already
/// running (one per worker thread), however many it has queued.
final class CheckScheduler: Sendable {
    /// A check admitted for one uid: ``run(_:)`` waits for the uid's turn, then does the work.
    struct Slot: Sendable {
        fileprivate let scheduler: CheckScheduler
        fileprivate let uid: UInt32

        /// Waits for a worker in the uid's turn, runs `work` on `NIOThreadPool`, and frees
        /// the worker for the next uid in turn.
        func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
            await scheduler.acquire(uid: uid)
            defer { scheduler.release() }
            return try await scheduler.pool.runIfActive(work)
        }
    }

    private struct State {
        var admitted: [UInt32: Int] = [:]
        var waiting: [UInt32: [CheckedContinuation<Void, Never>]] = [:]
        /// When each uid with admitted checks last got a worker (a serial number).
        var lastServed: [UInt32: UInt64] = [:]
        var running = 0
        var started: UInt64 = 0

        /// Counts a check of `uid` getting a worker.
        mutating func serve(_ uid: UInt32) {
            started += 1
            lastServed[uid] = started
        }

        /// The waiting check of the uid served least recently (one that never was first), if any.
        mutating func next() -> CheckedContinuation<Void, Never>? {
            guard let uid = waiting.keys.min(by: { (lastServed[$0] ?? 0, $0) < (lastServed[$1] ?? 0, $1) }) else { return nil }
            var queue = waiting[uid]!
            let first = queue.removeFirst()
            waiting[uid] = queue.isEmpty ? nil : queue
            serve(uid)
            return first
        }
    }

    private let state = NIOLockedValueBox(State())
    private let workers: Int
    private let refusalDelay: Duration
    fileprivate let pool: NIOThreadPool

    /// How long a refused check waits before its error 14, by default: a client that answers
    /// again at once then gets one refusal per connection every tenth of a second instead of
    /// thousands (each costs the event loops a request and a reply), as OpenSSH's
    /// `PerSourcePenalties` slows a source that keeps failing.
    static let defaultRefusalDelay: Duration = .milliseconds(100)

    /// - Parameters:
    ///   - workers: checks run at once (at most the pool's threads).
    ///   - refusalDelay: how long a refused check waits before its error.
    ///   - pool: the threads the work runs on.
    init(workers: Int = System.coreCount, refusalDelay: Duration = defaultRefusalDelay, pool: NIOThreadPool = .singleton) {
        self.workers = max(1, workers)
        self.refusalDelay = refusalDelay
        self.pool = pool
    }

    /// Admits a check for `uid` (error 14 when it has `limit` admitted), runs `body` with its
    /// slot, and frees the admission when `body` ends.
    func withSlot<R>(uid: UInt32, limit: Int, _ body: (Slot) async throws -> R) async throws -> R {
        let admitted = state.withLockedValue { state -> Bool in
            let count = state.admitted[uid, default: 0]
            guard count < limit else { return false }
            state.admitted[uid] = count + 1
            return true
        }
        guard admitted else {
            try? await Task.sleep(for: refusalDelay)
            throw StepSignError(.busy, "too many password checks queued for this peer (password.max_checks_per_uid); try again later")
        }
        defer {
            state.withLockedValue { state in
                let count = state.admitted[uid, default: 1] - 1
                state.admitted[uid] = count > 0 ? count : nil
                if count <= 0 { state.lastServed[uid] = nil }
            }
        }
        return try await body(Slot(scheduler: self, uid: uid))
    }

    /// Checks admitted for `uid` now (for tests and metrics).
    func admittedCount(uid: UInt32) -> Int {
        state.withLockedValue { $0.admitted[uid, default: 0] }
    }

    /// Checks of `uid` waiting for a worker now (for tests and metrics).
    func waitingCount(uid: UInt32) -> Int {
        state.withLockedValue { $0.waiting[uid]?.count ?? 0 }
    }

    /// Checks that got a worker since the start (for tests and metrics).
    var startedCount: Int {
        state.withLockedValue { Int($0.started) }
    }

    fileprivate func acquire(uid: UInt32) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let runNow = state.withLockedValue { state -> Bool in
                if state.running < workers, state.waiting.isEmpty {
                    state.running += 1
                    state.serve(uid)
                    return true
                }
                state.waiting[uid, default: []].append(continuation)
                return false
            }
            if runNow { continuation.resume() }
        }
    }

    fileprivate func release() {
        let next = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            if let next = state.next() { return next }
            state.running -= 1
            return nil
        }
        // The worker passes to the next check in turn (running stays the same).
        next?.resume()
    }
}
