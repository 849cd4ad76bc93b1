import Foundation

/// A task executor that runs nothing until the test says so: jobs enqueued on it (a task
/// started with it as its executor preference, and that task again each time it is resumed)
/// wait until ``runUntilIdle()`` runs them on the test's own thread.
///
/// So a test can show that a task is waiting without sleeping: it starts the task, runs the
/// executor until the task has nothing left to do, and finds the task suspended; whatever
/// resumes the task afterwards enqueues it here again, where the next ``runUntilIdle()`` runs
/// it. Which task has run, and how far, is then decided by the test alone, not by the timing
/// of other threads.
public final class SteppedTaskExecutor: TaskExecutor, @unchecked Sendable {
    private let lock = NSLock()
    private var jobs: [UnownedJob] = []

    public init() {}

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.withLock { jobs.append(job) }
    }

    /// Runs the waiting jobs, and those they enqueue, until none is left (each task has
    /// finished or is suspended on something not yet resumed). Returns how many jobs ran.
    @discardableResult
    public func runUntilIdle() -> Int {
        var ran = 0
        while let job = lock.withLock({ jobs.isEmpty ? nil : jobs.removeFirst() }) {
            job.runSynchronously(on: asUnownedTaskExecutor())
            ran += 1
        }
        return ran
    }
}
