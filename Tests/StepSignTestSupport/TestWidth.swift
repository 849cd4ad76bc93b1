import Synchronization

/// An async counting semaphore: at most `width` holders at once, the others wait in order.
public final class TestWidth: Sendable {
    private struct State {
        var available: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    public init(width: Int) {
        state = Mutex(State(available: width))
    }

    /// Runs `body` once fewer than `width` others run.
    public func run<T>(_ body: () async throws -> T) async rethrows -> T {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                guard state.available > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.available -= 1
                return true
            }
            if now { continuation.resume() }
        }
        defer {
            let next = state.withLock { state in
                if state.waiting.isEmpty {
                    state.available += 1
                    return nil as CheckedContinuation<Void, Never>?
                }
                return state.waiting.removeFirst()
            }
            next?.resume()
        }
        return try await body()
    }
}
