import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

/// `hold`: opens N connections, sends one level-0 signing on each and reads its reply (so every
/// session is live), prints its line, then holds them for --seconds or until stdin closes.
struct HoldCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "hold", abstract: "Opens connections and holds them.")
    @Option(help: "The socket path.")
    var socket: String
    @Option(help: "Connections to open.")
    var connections: Int
    @Option(help: "The user to sign for.")
    var user = "bench"
    @Option(name: .customLong("payload-bytes"), help: "Bytes of payload per request.")
    var payloadBytes = 200
    @Option(help: "Hold them this long (or until stdin closes).")
    var seconds = 30.0

    func run() throws {
        let clock = RunClock()
        signal(SIGPIPE, SIG_IGN)
        let proto = StepSignLineProtocol(user: user, payloadBytes: payloadBytes)
        var fds: [Int32] = []
        var ok = 0
        for i in 0..<connections {
            let fd = connectUnix(socket)
            var request: [UInt8] = []
            proto.request(i + 1, into: &request)
            writeAll(fd, request)
            fds.append(fd)
        }
        for fd in fds {
            let reply = LineReader(fd: fd).line()
            if reply.withUnsafeBytes({ contains($0, StepSignLineProtocol.success) }) { ok += 1 }
        }
        clock.report([("mode", "hold"), ("connections", "\(connections)"), ("ok", "\(ok)")])
        fflush(nil)
        var pollStdin = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0)]
        _ = poll(&pollStdin, 1, Int32(seconds * 1000))
        for fd in fds { close(fd) }
    }
}
