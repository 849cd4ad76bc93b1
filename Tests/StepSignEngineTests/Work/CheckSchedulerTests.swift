import NIOConcurrencyHelpers
import StepSignProtocol
import NIOPosix
@testable import StepSignEngine
import Testing

/// SPEC §7: checks queue per peer uid and the uids take turns, so a flooding uid delays
/// another uid's check by at most one check per worker; a uid past its cap gets error 14.
@Suite struct CheckSchedulerTests {
    /// A gate the checks wait on, so the test decides when each one finishes.
    final class Gate: Sendable {
        private let opened = NIOLockedValueBox(false)
        func open() { opened.withLockedValue { $0 = true } }
        func wait() { while !opened.withLockedValue({ $0 }) { usleep(1000) } }
    }

    @Test func aFloodingUIDDelaysAnotherUIDsCheckByAtMostOneCheckPerWorker() async throws {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        let scheduler = CheckScheduler(workers: 1, pool: pool)
        let order = NIOLockedValueBox<[String]>([])
        let gate = Gate()
        try await withThrowingTaskGroup(of: Void.self) { group in
            // The attacker's uid has 20 checks in; the first holds the only worker.
            for index in 0..<20 {
                group.addTask {
                    try await scheduler.withSlot(uid: 666, limit: 100) { slot in
                        try await slot.run {
                            gate.wait()
                            order.withLockedValue { $0.append("attacker \(index)") }
                        }
                    }
                }
            }
            // One running, nineteen queued for the worker: the order is set, no sleep needed.
            while scheduler.waitingCount(uid: 666) < 19 { try await Task.sleep(for: .milliseconds(5)) }
            group.addTask {
                try await scheduler.withSlot(uid: 1000, limit: 100) { slot in
                    try await slot.run { order.withLockedValue { $0.append("user") } }
                }
            }
            while scheduler.waitingCount(uid: 1000) < 1 { try await Task.sleep(for: .milliseconds(5)) }
            gate.open()
            try await group.waitForAll()
        }
        try await pool.shutdownGracefully()
        let done = order.withLockedValue { $0 }
        let position = try #require(done.firstIndex(of: "user"))
        // The one running when the user arrived, then (round robin) the user's.
        #expect(position <= 1, "\(done)")
        #expect(done.count == 21)
    }

    @Test func aUIDWithLimitChecksAdmittedGetsErrorFourteenAndTheOthersDoNot() async throws {
        let scheduler = CheckScheduler(workers: 1)
        let gate = Gate()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    try await scheduler.withSlot(uid: 666, limit: 2) { slot in try await slot.run { gate.wait() } }
                }
            }
            while scheduler.admittedCount(uid: 666) < 2 { try await Task.sleep(for: .milliseconds(5)) }
            await #expect(throws: StepSignError.self) {
                try await scheduler.withSlot(uid: 666, limit: 2) { _ in }
            }
            // Another uid is admitted.
            try await scheduler.withSlot(uid: 1000, limit: 2) { _ in }
            gate.open()
            try await group.waitForAll()
        }
        #expect(scheduler.admittedCount(uid: 666) == 0)
        try await scheduler.withSlot(uid: 666, limit: 2) { _ in }
    }
}
