import Foundation

/// A task executor whose threads may block: a test that sleeps, waits on a socket or on a
/// child process runs here instead of on Swift's cooperative pool, which has one thread per
/// core (two on the test host), so that two blocking tests no longer hold up every other test.
///
/// A job is handed to an idle thread, or to a new one when none is idle; threads stay for the
/// next jobs. How many tests run at once is bounded by whoever enqueues (`TestWidth`), not here:
/// a test's own child tasks must never wait for a thread, or a test that waits for two of its
/// tasks at once could wait for ever.
public final class BlockingTestExecutor: TaskExecutor, @unchecked Sendable {
    /// The one pool every blocking test shares.
    public static let shared = BlockingTestExecutor()

    // All guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var head = 0
    /// Threads waiting for a wake-up.
    private var idle = 0
    /// Wake-ups given and not yet taken: each is taken by exactly one waiting thread.
    private var wakeUps = 0

    private init() {}

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        if idle > 0 {
            idle -= 1
            wakeUps += 1
            condition.signal()
            condition.unlock()
        } else {
            condition.unlock()
            let thread = Thread { [self] in work() }
            thread.name = "blocking-test"
            thread.start()
        }
    }

    private func work() {
        condition.lock()
        while true {
            if head < jobs.count {
                let job = jobs[head]
                head += 1
                if head > 64, head * 2 > jobs.count {
                    jobs.removeFirst(head)
                    head = 0
                }
                condition.unlock()
                job.runSynchronously(on: asUnownedTaskExecutor())
                condition.lock()
                continue
            }
            idle += 1
            while wakeUps == 0 { condition.wait() }
            wakeUps -= 1
        }
    }
}
