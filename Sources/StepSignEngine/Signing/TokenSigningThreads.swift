import NIOPosix

/// The threads that make signatures with keys in a PKCS#11 token (SPEC §5.7), off Swift's
/// cooperative thread pool.
///
/// A token call blocks: it waits for one of the token's `max_sessions` sessions (a
/// `DispatchSemaphore`) and then for the token, which may take milliseconds on hardware. The
/// cooperative pool has one thread per core; a few signers blocked there would stall every
/// other request (`status` too). So a token key signs on a pool of `max_sessions` threads of
/// its own, started with the engine and stopped by ``shutdown()``; a key file signs inline,
/// as before (it is CPU work of microseconds).
package final class TokenSigningThreads: Sendable {
    private let pool: NIOThreadPool?

    /// `threads`: the pool's size (`[signing.pkcs11] max_sessions`), or nil for none
    /// (`key_store = "file"`: every key signs inline).
    package init(threads: Int?) {
        guard let threads else {
            pool = nil
            return
        }
        let pool = NIOThreadPool(numberOfThreads: max(1, threads))
        pool.start()
        self.pool = pool
    }

    /// Runs `body` on the pool when `inToken` (the key is in the token) and there is one, else
    /// here.
    package func run<T: Sendable>(inToken: Bool, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        guard inToken, let pool else { return try body() }
        return try await pool.runIfActive(body)
    }

    /// Stops the threads, after the work on them ends; a later ``run(inToken:_:)`` of a token
    /// key fails.
    package func shutdown() async {
        try? await pool?.shutdownGracefully()
    }
}
