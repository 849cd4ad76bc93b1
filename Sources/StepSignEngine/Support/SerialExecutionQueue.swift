/// Runs async operations one at a time, in the order they were submitted, each to its end
/// before the next starts (an actor alone would interleave them at every `await`).
///
/// The keyring uses it so that a rotation, a revocation and a refresh never overlap: two
/// refreshes that both find the daemon's key revoked must not both make a new key.
actor SerialExecutionQueue {
    private var tail: Task<Void, Never>?

    /// Waits for every operation submitted before, then runs `operation` and returns its result.
    func run<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let previous = tail
        let task = Task {
            await previous?.value
            return try await operation()
        }
        tail = Task { _ = try? await task.value }
        return try await task.value
    }
}
