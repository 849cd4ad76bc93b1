import NIOCore

/// Runs a task's jobs on one NIO event loop, so that a connection's request handling stays on
/// the thread that reads and writes its socket.
///
/// Without it every request would hop from the event loop to the cooperative pool and back
/// (two thread wake-ups per request, the dominant cost on a small machine). Work that blocks
/// (scrypt, child processes, a witness's fsync) is sent to `NIOThreadPool`, never run here.
/// The daemon's socket server and the witness's HTTP server share it.
public final class EventLoopTaskExecutor: TaskExecutor, Sendable {
    private let eventLoop: any EventLoop

    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
