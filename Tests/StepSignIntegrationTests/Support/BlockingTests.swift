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

    /// Whether the suite is `.serialized` too (``blockingSerialized``): a suite's traits other
    /// than the recursive ones are not among its tests' traits, so it says so here.
    var serialized = false

    /// Each test case takes a place by itself, except the cases of a `.serialized` test or
    /// suite, which run one after another anyway: the test takes one place for all of them, so
    /// that its chain does not queue for a place again before every case (122 bad inputs on one
    /// daemon did, and were the run's tail).
    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        guard !test.isSuite else { return nil }
        let serialized = serialized || test.traits.contains { $0 is ParallelizationTrait }
        return (testCase == nil) == serialized ? self : nil
    }

    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        guard !Self.entered else {
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

    /// A `.serialized` suite's tests block: each test takes one place for all its cases.
    static var blockingSerialized: Self { BlockingTests(serialized: true) }
}

/// Marks a test that mostly waits, for a minute or more (an outage of a server it must ride
/// out): it runs outside ``BlockingTests``' width, from the start.
struct WaitsMinutes: TestTrait {}

extension Trait where Self == WaitsMinutes {
    /// The test mostly waits, for minutes: see ``WaitsMinutes``.
    static var waitsMinutes: Self { WaitsMinutes() }
}
