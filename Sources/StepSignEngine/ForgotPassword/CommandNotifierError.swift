#if canImport(Glibc)
import Glibc
#endif

/// Why a notifier program did not take a message. Cases name the program (`argv[0]`) and
/// what happened to it, nothing else: never the message, and never the program's output.
public enum CommandNotifierError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The configured argv is empty.
    case noProgram
    /// The program could not be started (`posix_spawn`'s error number).
    case spawnFailed(program: String, errno: Int32)
    /// A pipe to the program could not be made or written.
    case pipeFailed(program: String, operation: String, errno: Int32)
    /// The program exited with a status other than 0.
    case exited(program: String, status: Int32)
    /// The program was ended by a signal it did not get from stepsign.
    case killedBySignal(program: String, signal: Int32)
    /// The program ran past the timeout and was killed (with its process group).
    case timedOut(program: String, timeout: Duration)

    public var description: String {
        switch self {
        case .noProgram: "notifier: no program configured"
        case let .spawnFailed(program, errno): "notifier \(program) could not be started: \(Self.message(errno))"
        case let .pipeFailed(program, operation, errno): "notifier \(program): \(operation) failed: \(Self.message(errno))"
        case let .exited(program, status): "notifier \(program) exited with status \(status)"
        case let .killedBySignal(program, signal): "notifier \(program) was killed by signal \(signal)"
        case let .timedOut(program, timeout): "notifier \(program) did not finish within \(timeout) and was killed"
        }
    }

    private static func message(_ number: Int32) -> String { String(cString: strerror(number)) }
}
