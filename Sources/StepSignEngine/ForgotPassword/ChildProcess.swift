internal import CSystemShims
#if canImport(Glibc)
import Glibc
import StepSignSystem
#endif

/// Runs a program directly (no shell), feeds it bytes on stdin and waits for it with a
/// deadline. Blocking: call it on a thread of its own (`NIOThreadPool`), never on the
/// cooperative pool.
///
/// The child gets:
/// - argv exactly as given, `argv[0]` being an absolute path (`posix_spawn`, no `PATH` search);
/// - the environment `environment`, nothing inherited from stepsign;
/// - stdin a pipe that is closed after `input`, stdout `/dev/null`, stderr stepsign's own
///   (the journal), every other descriptor closed (`closefrom` where glibc has it; all of
///   stepsign's descriptors are close-on-exec in any case);
/// - a process group of its own, default dispositions for the usual signals and an empty
///   signal mask.
///
/// When the deadline passes, the whole process group gets `SIGKILL` and the child is reaped.
/// Until it is reaped its pid cannot be reused, so the kill never hits a stranger.
enum ChildProcess {
    /// The environment of the child.
    static let environment = ["PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"]

    /// How a run ended.
    enum Ending: Equatable {
        case exited(Int32)
        case signaled(Int32)
        case timedOut
    }

    /// Runs `argv` with `input` on stdin until it ends or `timeout` passes.
    static func run(argv: [String], input: [UInt8], timeout: Duration) throws(CommandNotifierError) -> Ending {
        guard let program = argv.first else { throw .noProgram }
        let deadline = ContinuousClock.now + timeout

        let (readEnd, writeEnd) = try makePipe(program: program)
        var writeEndOpen = true
        defer { if writeEndOpen { close(writeEnd) } }

        let pid: pid_t
        do {
            defer { close(readEnd) }
            pid = try spawn(argv: argv, stdin: readEnd)
        }

        let wrote = write(input, to: writeEnd, until: deadline)
        close(writeEnd)
        writeEndOpen = false
        switch wrote {
        case .success:
            return try wait(pid: pid, program: program, until: deadline)
        case let .failure(error) where error.number == ETIMEDOUT:
            kill(pid: pid)
            return .timedOut
        case let .failure(error):
            kill(pid: pid)
            throw .pipeFailed(program: program, operation: "write to stdin", errno: error.number)
        }
    }

    /// A pipe whose ends are close-on-exec: atomically with `pipe2` where glibc has it (so a
    /// program spawned by another thread meanwhile cannot inherit it), else with `fcntl`.
    private static func makePipe(program: String) throws(CommandNotifierError) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard stepsign_pipe_cloexec(&ends) == 0 else {
            throw .pipeFailed(program: program, operation: "pipe2", errno: errno)
        }
        return (ends[0], ends[1])
    }

    private static func spawn(argv: [String], stdin: Int32) throws(CommandNotifierError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        let closing = stepsign_spawn_addclosefrom(&actions, 3)
        guard closing == 0 else { throw .spawnFailed(program: argv[0], errno: closing) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in cArguments { free(pointer) }
            for pointer in cEnvironment { free(pointer) }
        }
        var pid: pid_t = 0
        var result = posix_spawn(&pid, argv[0], &actions, &attributes, cArguments, cEnvironment)
        // ETXTBSY: the program is open for writing somewhere, typically in a child another
        // thread forked while the file was being written (it closes at that child's exec). It
        // passes within moments; a few short retries, then the error.
        var retries = 0
        while result == ETXTBSY, retries < 10 {
            retries += 1
            usleep(20_000)
            result = posix_spawn(&pid, argv[0], &actions, &attributes, cArguments, cEnvironment)
        }
        guard result == 0 else { throw .spawnFailed(program: argv[0], errno: result) }
        return pid
    }

    /// Writes `bytes` to `fd` (made non-blocking) until done or `deadline`. `SIGPIPE` is blocked
    /// on this thread meanwhile, and one it raised is taken back, so a child that exits
    /// without reading cannot kill stepsign; such a child is judged by its exit status.
    private static func write(_ bytes: [UInt8], to fd: Int32, until deadline: ContinuousClock.Instant) -> Result<Void, Errno> {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
        defer {
            var zero = timespec()
            while sigtimedwait(&pipeSignal, nil, &zero) == SIGPIPE {}
            pthread_sigmask(SIG_SETMASK, &previous, nil)
        }
        return bytes.withUnsafeBytes { buffer -> Result<Void, Errno> in
            var offset = 0
            while offset < buffer.count {
                let written = retryingOnEINTR { Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset) }
                if written >= 0 {
                    offset += written
                    continue
                }
                switch errno {
                case EPIPE: return .success(())
                case EAGAIN:
                    let left = milliseconds(until: deadline)
                    if left <= 0 { return .failure(Errno(ETIMEDOUT)) }
                    var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&entry, 1, left)
                default: return .failure(Errno(errno))
                }
            }
            return .success(())
        }
    }

    /// Polls for the child's end (1 ms, doubling to 50 ms) until `deadline`, then kills it.
    private static func wait(pid: pid_t, program: String, until deadline: ContinuousClock.Instant) throws(CommandNotifierError) -> Ending {
        var interval: Duration = .milliseconds(1)
        while true {
            var status: Int32 = 0
            let result = retryingOnEINTR { waitpid(pid, &status, WNOHANG) }
            if result == pid { return ending(status) }
            if result < 0 { throw .pipeFailed(program: program, operation: "waitpid", errno: errno) }
            let now = ContinuousClock.now
            if now >= deadline {
                kill(pid: pid)
                return .timedOut
            }
            let pause = min(interval, deadline - now)
            var request = timespec(tv_sec: Int(pause.components.seconds), tv_nsec: Int(pause.components.attoseconds / 1_000_000_000))
            nanosleep(&request, nil)
            interval = min(interval * 2, .milliseconds(50))
        }
    }

    /// `SIGKILL` to the child's process group and the child, then reaps it.
    private static func kill(pid: pid_t) {
        _ = Glibc.kill(-pid, SIGKILL)
        _ = Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        _ = retryingOnEINTR { waitpid(pid, &status, 0) }
    }

    /// The `waitpid` status decoded (the `WIFEXITED` family are macros Swift cannot import).
    private static func ending(_ status: Int32) -> Ending {
        let low = status & 0x7F
        return low == 0 ? .exited((status >> 8) & 0xFF) : .signaled(low)
    }

    private static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let left = deadline - ContinuousClock.now
        let millis = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
        return Int32(clamping: max(0, millis))
    }

    /// An `errno` value.
    struct Errno: Error { var number: Int32; init(_ number: Int32) { self.number = number } }
}
