#if canImport(Glibc)
import Glibc
#endif
internal import CSystemShims
import Foundation

/// A child process the tests own outright: started with `posix_spawn`, reaped only by us.
///
/// Foundation's `Process` on Linux sometimes misses a child's exit when many start and stop
/// at once; a test that then signals the stale pid can hit an unrelated process once the pid
/// is reused (pid_max may be 32768). Here the pid stays ours until `wait` reaps it, so
/// `signal` can never reach another process.
public final class Subprocess: @unchecked Sendable {
    public let pid: pid_t
    private var exitStatus: Int32?
    private let lock = NSLock()

    /// Starts `executable` with `arguments`; stdout and stderr append to `logPath` (or go to
    /// /dev/null), stdin is /dev/null. `environment` entries are added to the inherited ones.
    public convenience init(executable: String, arguments: [String], logPath: String? = nil,
                            environment: [String: String] = [:]) throws {
        try self.init(executable: executable, arguments: arguments, stdin: "/dev/null", stdout: logPath ?? "/dev/null",
                      stderr: nil, environment: environment)
    }

    /// Starts `executable` with `arguments`, stdin read from the file `stdin`, stdout appended
    /// to the file `stdout` and stderr to `stderr` (nil: with stdout). `environment` entries are
    /// added to the inherited ones.
    public init(executable: String, arguments: [String], stdin: String, stdout: String, stderr: String?,
                environment: [String: String] = [:]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        if let stderr {
            posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        // Nothing else the test process has open reaches the child: a file another test is
        // writing (a notifier script, which would then fail to run with ETXTBSY for as long as
        // the child lives), other daemons' sockets.
        let closing = stepsign_spawn_addclosefrom(&actions, 3)
        guard closing == 0 else { throw SubprocessError.spawn(executable, closing) }

        var merged = ProcessInfo.processInfo.environment
        merged.merge(environment) { $1 }
        let argv = [executable] + arguments
        let envp = merged.map { "\($0)=\($1)" }
        var child: pid_t = 0
        let result = withCStrings(argv) { argvPointers in
            withCStrings(envp) { envPointers in
                posix_spawn(&child, executable, &actions, nil, argvPointers, envPointers)
            }
        }
        guard result == 0 else { throw SubprocessError.spawn(executable, result) }
        pid = child
    }

    /// Sends `signal` unless the process has been reaped.
    public func signal(_ signal: Int32) {
        lock.lock()
        defer { lock.unlock() }
        if exitStatus == nil { kill(pid, signal) }
    }

    /// Whether it is still running (reaps it if it has exited).
    public var isRunning: Bool { poll() == nil }

    /// Waits up to `timeout` seconds; returns the exit code (128+N for signal N), or nil if
    /// it is still running.
    @discardableResult
    public func wait(timeout: TimeInterval = 60) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let status = poll() { return status }
            if Date() >= deadline { return nil }
            usleep(5_000)
        }
    }

    private func poll() -> Int32? {
        lock.lock()
        defer { lock.unlock() }
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        let reaped = waitpid(pid, &status, WNOHANG)
        guard reaped == pid else { return nil }
        let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        exitStatus = code
        return code
    }

    deinit {
        if poll() == nil {
            kill(pid, SIGKILL)
            wait(timeout: 10)
        }
    }
}

/// A child that could not be started.
public enum SubprocessError: Error, CustomStringConvertible {
    case spawn(String, Int32)

    public var description: String {
        switch self {
        case let .spawn(path, code): "posix_spawn \(path): \(String(cString: strerror(code)))"
        }
    }
}

private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { pointers.forEach { free($0) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
