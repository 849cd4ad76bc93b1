import Foundation
import StepSignSystem
import Testing

/// The executor SQLite's ledger commits block on (issue 23): a task that prefers it runs on
/// its one named thread, jobs in order, and the thread ends with the executor.
@Suite struct ThreadExecutorTests {
    @Test func aTaskThatPrefersItRunsOnItsNamedThread() async {
        let executor = ThreadExecutor(name: "ss-test-exec")
        let names = await Task(executorPreference: executor) {
            var seen: [String] = [currentThreadName()]
            // Suspensions inside the task come back to the same thread.
            for _ in 0..<3 {
                await Task.yield()
                seen.append(currentThreadName())
            }
            return seen
        }.value
        #expect(names == Array(repeating: "ss-test-exec", count: 4))
    }

    @Test func blockingWorkOnItLeavesTheCooperativePoolFree() async throws {
        let executor = ThreadExecutor(name: "ss-test-block")
        let blocked = Task(executorPreference: executor) {
            // Holds the executor's thread, as a commit waiting for its fsync does.
            usleep(300_000)
            return currentThreadName()
        }
        // Meanwhile tasks on the global executor still run.
        let elsewhere = await Task { currentThreadName() }.value
        #expect(elsewhere != "ss-test-block")
        #expect(await blocked.value == "ss-test-block")
    }

    @Test func jobsRunInTheOrderTheyCame() async {
        let executor = ThreadExecutor(name: "ss-test-order")
        let order = await withTaskExecutorPreference(executor) {
            var order: [Int] = []
            for index in 0..<100 {
                await Task.yield()
                order.append(index)
            }
            return order
        }
        #expect(order == Array(0..<100))
    }

    @Test func itsThreadEndsWithTheExecutor() async throws {
        do {
            let executor = ThreadExecutor(name: "ss-test-end")
            await Task(executorPreference: executor) {}.value
            #expect(threadNames().contains("ss-test-end"))
        }
        var ended = false
        for _ in 0..<200 where !ended {
            ended = !threadNames().contains("ss-test-end")
            if !ended { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(ended)
    }
}

/// The calling thread's name as the kernel has it.
private func currentThreadName() -> String {
    let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
    return comm.hasSuffix("\n") ? String(comm.dropLast()) : comm
}

/// The names of this process's threads.
private func threadNames() -> [String] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
        .map { $0.hasSuffix("\n") ? String($0.dropLast()) : $0 }
}
