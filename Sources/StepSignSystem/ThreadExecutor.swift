#if canImport(Glibc)
import Glibc
#endif
internal import CSystemShims

/// A `TaskExecutor` with one thread of its own: every job enqueued on it runs there, in order.
///
/// For work that blocks (a local database commit and its `fsync`): a task that prefers this
/// executor (`Task(executorPreference:)`, `withTaskExecutorPreference`) may block without
/// holding a thread of the cooperative pool or an event loop, and its jobs follow one another
/// on the same thread with no hop between them. The thread carries `name` (`top -H`, `perf`).
///
/// The thread lives as long as the executor: when the last reference goes, it runs what is
/// queued and ends.
public final class ThreadExecutor: TaskExecutor, Sendable {
    private let queue: JobQueue

    /// Starts the executor's thread, called `name` (at most 15 bytes are kept by the kernel).
    public init(name: String) {
        queue = JobQueue()
        queue.start(name: name)
    }

    deinit {
        queue.stop()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        queue.push(UnownedJob(job), on: asUnownedTaskExecutor())
    }
}

/// The executor's queue and the thread that drains it; kept apart from ``ThreadExecutor`` so
/// the thread holds the queue, not the executor, and the executor can go away.
///
/// Each job is kept with the executor it runs on, held unowned: whoever makes a task prefer an
/// executor keeps it alive while the task runs (the store that owns it).
private final class JobQueue: @unchecked Sendable {
    // Guarded by `mutex`: `jobs` and `stopping`.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var jobs: [(UnownedJob, UnownedTaskExecutor)] = []
    private var stopping = false

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    func start(name: String) {
        let context = Unmanaged.passRetained(StartContext(queue: self, name: name)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            let context = Unmanaged<StartContext>.fromOpaque(raw!).takeRetainedValue()
            _ = stepsign_name_this_thread(context.name)
            context.queue.runUntilStopped()
            return nil
        }, context)
        precondition(result == 0, "cannot start the thread \(name): error \(result)")
        pthread_detach(thread)
    }

    func push(_ job: UnownedJob, on executor: UnownedTaskExecutor) {
        pthread_mutex_lock(mutex)
        jobs.append((job, executor))
        pthread_mutex_unlock(mutex)
        pthread_cond_signal(condition)
    }

    func stop() {
        pthread_mutex_lock(mutex)
        stopping = true
        pthread_mutex_unlock(mutex)
        pthread_cond_signal(condition)
    }

    private func runUntilStopped() {
        var batch: [(UnownedJob, UnownedTaskExecutor)] = []
        while true {
            pthread_mutex_lock(mutex)
            while jobs.isEmpty && !stopping {
                pthread_cond_wait(condition, mutex)
            }
            if jobs.isEmpty {
                pthread_mutex_unlock(mutex)
                return
            }
            swap(&batch, &jobs)
            pthread_mutex_unlock(mutex)
            for (job, executor) in batch {
                job.runSynchronously(on: executor)
            }
            batch.removeAll(keepingCapacity: true)
        }
    }
}

private final class StartContext {
    let queue: JobQueue
    let name: String

    init(queue: JobQueue, name: String) {
        self.queue = queue
        self.name = name
    }
}
