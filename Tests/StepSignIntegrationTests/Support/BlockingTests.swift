import Foundation
import StepSignTestSupport
import Testing

/// Runs each test of a suite on ``BlockingTestExecutor``'s threads, at most ``width`` at once.
///
/// Almost every test here blocks: it starts a real `stepsignd` and talks to it over blocking
/// sockets, waits for child processes, polls a log. On Swift's cooperative pool (one thread
/// per core) two such tests would hold every thread and the others would wait for them, so
/// the suite ran two tests at a time whatever it waited on; on threads that may block, it runs
/// ``width`` at a time and the machine's cores do the work.
struct BlockingTests: SuiteTrait, TestTrait, TestScoping {
    /// How many tests of these suites run at once: `STEPSIGN_TEST_WIDTH`, or 3 per core.
    static let width = ProcessInfo.processInfo.environment["STEPSIGN_TEST_WIDTH"].flatMap(Int.init)
        ?? 3 * ProcessInfo.processInfo.activeProcessorCount
    static let gate = TestWidth(width: max(1, width))

    /// Set inside a gated case, so a nested suite with the trait too does not take a second place.
    @TaskLocal static var entered = false

    var isRecursive: Bool { true }

    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        // A suite's own scope, and a test's with cases, only gather their cases: each case
        // is gated and moved by itself.
        guard testCase != nil, !Self.entered else {
            try await function()
            return
        }
        func run() async throws {
            try await Self.$entered.withValue(true) {
                try await withTaskExecutorPreference(BlockingTestExecutor.shared) {
                    try await function()
                }
            }
        }
        // A test that mostly waits for minutes starts at once, so it is not the run's tail.
        if test.traits.contains(where: { $0 is WaitsMinutes }) {
            try await run()
        } else {
            try await Self.gate.run { try await run() }
        }
    }
}

extension Trait where Self == BlockingTests {
    /// The suite's tests block (real daemons, sockets, child processes): see ``BlockingTests``.
    static var blocking: Self { BlockingTests() }
}

/// Marks a test that mostly waits, for a minute or more (an outage of a server it must ride
/// out): it runs outside ``BlockingTests``' width, from the start.
struct WaitsMinutes: TestTrait {}

extension Trait where Self == WaitsMinutes {
    /// The test mostly waits, for minutes: see ``WaitsMinutes``.
    static var waitsMinutes: Self { WaitsMinutes() }
}
