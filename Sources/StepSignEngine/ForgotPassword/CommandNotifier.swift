import NIOPosix

/// The notifier used when `forgot_password.notifier` is set: runs that program for each
/// message and writes the message's JSON line (`ActivationMessage.jsonLine`) to its stdin.
///
/// - No shell: `argv[0]` (an absolute path, as the configuration requires) is executed with
///   `argv[1...]` as they are. The code travels only on stdin: never in the arguments or the
///   environment (the child gets `ChildProcess.environment`, nothing of stepsign's).
/// - Success is exit status 0. Any other status, a signal, or running past `timeout` is a
///   `CommandNotifierError`, which names the program and the status only. The child's stdout
///   goes to `/dev/null`; its stderr is stepsign's (the journal) and is never read into an
///   error, so a program that echoes its input there is the program's own fault to fix.
/// - On timeout the child's whole process group is killed with `SIGKILL`.
/// - The spawn and the wait block a thread of `NIOThreadPool.singleton` (for at most
///   `timeout`), never the cooperative pool.
public struct CommandNotifier: CodeNotifier {
    /// How long a notifier program may run unless told otherwise.
    public static let defaultTimeout: Duration = .seconds(10)

    /// The program and its arguments.
    public let argv: [String]
    /// How long the program may run before it is killed.
    public let timeout: Duration

    public init(argv: [String], timeout: Duration = defaultTimeout) {
        self.argv = argv
        self.timeout = timeout
    }

    public func deliver(_ message: some NotifierMessage) async throws {
        let argv = self.argv
        let timeout = self.timeout
        let input = message.jsonLine
        let ending = try await NIOThreadPool.singleton.runIfActive {
            try ChildProcess.run(argv: argv, input: input, timeout: timeout)
        }
        switch ending {
        case .exited(0): return
        case let .exited(status): throw CommandNotifierError.exited(program: argv[0], status: status)
        case let .signaled(signal): throw CommandNotifierError.killedBySignal(program: argv[0], signal: signal)
        case .timedOut: throw CommandNotifierError.timedOut(program: argv[0], timeout: timeout)
        }
    }
}
