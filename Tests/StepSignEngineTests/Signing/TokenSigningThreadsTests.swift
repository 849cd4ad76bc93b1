import Foundation
@testable import StepSignEngine
import Testing

/// A key in a PKCS#11 token signs off Swift's cooperative pool (SPEC §5.7): a token call blocks
/// on the token's sessions and the token itself, and the cooperative pool has a thread per
/// core. A key file signs inline.
@Suite struct TokenSigningThreadsTests {
    /// The name of the thread this runs on (NIOThreadPool names its threads `TP-#n`).
    private static func threadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("a token key's work runs on the pool's threads, a file key's where it is asked for")
    func tokenWorkRunsOnThePool() async throws {
        let threads = TokenSigningThreads(threads: 1)
        let inToken = try await threads.run(inToken: true) { Self.threadName() }
        let here = Self.threadName()
        let inline = try await threads.run(inToken: false) { Self.threadName() }
        #expect(inToken.hasPrefix("TP-"), "\(inToken)")
        #expect(!here.hasPrefix("TP-") && !inline.hasPrefix("TP-"), "\(here) \(inline)")
        await threads.shutdown()
    }

    @Test("without a token (key_store = \"file\") everything runs inline")
    func noTokenNoThreads() async throws {
        let threads = TokenSigningThreads(threads: nil)
        #expect(!(try await threads.run(inToken: true) { Self.threadName() }).hasPrefix("TP-"))
        await threads.shutdown()
    }

    @Test("one thread serves many signers at once: each completes")
    func manyAtOnce() async throws {
        let threads = TokenSigningThreads(threads: 1)
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<64 { group.addTask { try await threads.run(inToken: true) { index } } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(results.sorted() == Array(0..<64))
        await threads.shutdown()
    }
}
