import Synchronization

/// The `waitForProof` requests waiting for witness cosignatures, and the `stepsign-witnessd`
/// pushers waiting to be asked for a round (SPEC §5.6).
///
/// A waiter asks for a checkpoint at once (``request()``): a pusher waiting in
/// ``nextRequest(within:)`` is woken, or the next one to ask is answered at once. Requests made
/// while a round runs are one request, so waiters that arrive together share one checkpoint
/// and one push. When cosignatures of a checkpoint are stored (``cosigned(size:)``), every
/// waiter whose entry it covers is woken to count them. Waiting holds no thread (a suspended
/// task each), is bounded per peer uid (``maxWaitersPerUID``), and ends at its deadline or at
/// shutdown (``endAll()``).
final class WitnessWaits: Sendable {
    /// A ticket of one waiter, from ``register(index:uid:)``.
    struct Ticket: Sendable, Hashable {
        fileprivate var id: UInt64
    }

    /// How many `waitForProof`s one peer uid may have waiting at once; one more gets error 14.
    static let maxWaitersPerUID = 64
    /// How many pushers may wait for a request at once (one per `stepsign-witnessd`).
    static let maxPushers = 8

    private struct Waiter {
        var index: Int64
        var uid: UInt32
        /// The largest covering size cosigned since the waiter last looked (a wake not yet taken).
        var cosignedSize: Int64?
        var continuation: CheckedContinuation<Int64?, Never>?
    }

    private struct State {
        var nextID: UInt64 = 0
        var waiters: [UInt64: Waiter] = [:]
        var pushers: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        /// A request no pusher has taken yet.
        var requested = false
        var ended = false
    }

    private let state = Mutex(State())

    /// Registers a waiter for a checkpoint covering leaf `index`; nil when `uid` already has
    /// ``maxWaitersPerUID`` waiting or shutdown has begun.
    func register(index: Int64, uid: UInt32) -> Ticket? {
        state.withLock { state in
            guard !state.ended,
                  state.waiters.values.count(where: { $0.uid == uid }) < Self.maxWaitersPerUID else { return nil }
            state.nextID += 1
            state.waiters[state.nextID] = Waiter(index: index, uid: uid)
            return Ticket(id: state.nextID)
        }
    }

    /// Forgets a waiter (after its answer, error or timeout).
    func unregister(_ ticket: Ticket) {
        let continuation = state.withLock { $0.waiters.removeValue(forKey: ticket.id)?.continuation }
        continuation?.resume(returning: nil)
    }

    /// How many waiters there are now (for tests and `status`).
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Asks the pushers for a round now: every waiting one returns true, or else the next to ask.
    func request() {
        let woken = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            guard !state.ended else { return [] }
            guard !state.pushers.isEmpty else {
                state.requested = true
                return []
            }
            defer { state.pushers = [:] }
            return Array(state.pushers.values)
        }
        for pusher in woken { pusher.resume(returning: true) }
    }

    /// Waits until a waiter asks for a round (true, at once if one asked since the last call)
    /// or `seconds` pass (false); false at once when there are already ``maxPushers`` waiting.
    func nextRequest(within seconds: Int) async -> Bool {
        let id = state.withLock { state -> UInt64? in
            guard !state.ended, state.pushers.count < Self.maxPushers else { return nil }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return false }
        let deadline = ContinuousClock.now + .seconds(seconds)
        let timer = Task {
            // Cancelled (the pusher was answered first): nothing to end.
            guard (try? await Task.sleep(until: deadline)) != nil else { return }
            let pusher = self.state.withLock { $0.pushers.removeValue(forKey: id) }
            pusher?.resume(returning: false)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let answer = state.withLock { state -> Bool? in
                if state.ended { return false }
                if state.requested {
                    state.requested = false
                    return true
                }
                guard ContinuousClock.now < deadline else { return false }
                state.pushers[id] = continuation
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// Cosignatures of the checkpoint of `size` entries were stored: wakes the waiters whose
    /// entry it covers.
    func cosigned(size: Int64) {
        let woken = state.withLock { state -> [(CheckedContinuation<Int64?, Never>, Int64)] in
            var woken: [(CheckedContinuation<Int64?, Never>, Int64)] = []
            for (id, var waiter) in state.waiters where waiter.index < size {
                let best = max(waiter.cosignedSize ?? 0, size)
                if let continuation = waiter.continuation {
                    waiter.continuation = nil
                    waiter.cosignedSize = nil
                    woken.append((continuation, best))
                } else {
                    waiter.cosignedSize = best
                }
                state.waiters[id] = waiter
            }
            return woken
        }
        for (continuation, size) in woken { continuation.resume(returning: size) }
    }

    /// Waits until a checkpoint covering the waiter's entry is cosigned (its size; at once if
    /// one was since the last call) or until `deadline` (nil), holding no thread.
    func next(_ ticket: Ticket, until deadline: ContinuousClock.Instant) async -> Int64? {
        let timer = Task {
            // Cancelled (the wait was answered first): this ticket's next wait is not this one's.
            guard (try? await Task.sleep(until: deadline)) != nil else { return }
            let continuation = self.state.withLock { state -> CheckedContinuation<Int64?, Never>? in
                defer { state.waiters[ticket.id]?.continuation = nil }
                return state.waiters[ticket.id]?.continuation
            }
            continuation?.resume(returning: nil)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Int64?, Never>) in
            let answer = state.withLock { state -> Int64?? in
                guard !state.ended, var waiter = state.waiters[ticket.id], ContinuousClock.now < deadline else { return .some(nil) }
                if let size = waiter.cosignedSize {
                    waiter.cosignedSize = nil
                    state.waiters[ticket.id] = waiter
                    return .some(size)
                }
                waiter.continuation = continuation
                state.waiters[ticket.id] = waiter
                return .none
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// Shutdown has begun: every waiter and pusher answers now, and none waits from then on.
    func endAll() {
        let (waiters, pushers) = state.withLock { state in
            state.ended = true
            let waiters = state.waiters.values.compactMap(\.continuation)
            for id in state.waiters.keys { state.waiters[id]?.continuation = nil }
            let pushers = Array(state.pushers.values)
            state.pushers = [:]
            return (waiters, pushers)
        }
        for waiter in waiters { waiter.resume(returning: nil) }
        for pusher in pushers { pusher.resume(returning: false) }
    }
}
