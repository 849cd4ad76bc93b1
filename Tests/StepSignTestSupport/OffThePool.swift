import Foundation

/// Runs `body`, which blocks (sleeps, waits on sockets and child processes), on a thread of its
/// own and awaits its result, so a long blocking test does not hold one of the few threads of
/// Swift's cooperative pool (two on a two-core host) that every async test needs.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try body() })
        }
    }
}
