import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

/// `attack`: the starvation attack of SPEC §7. N connections, each logging in as a fresh name
/// that is not a user (no login needed, no block reached) with a wrong password, again and
/// again, each answer sent as soon as the last reply came. Every answer the daemon admits costs
/// it one scrypt check. Counts the replies: checked (102/153), refused busy (error 14), other.
struct AttackCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "attack", abstract: "Wrong logins for fresh unknown names.")
    @Option(help: "The socket path.")
    var socket: String
    @Option(help: "Connections to attack with.")
    var connections: Int
    @Option(help: "Attack for this many seconds.")
    var seconds = 10.0

    func run() throws {
        let clock = RunClock()
        signal(SIGPIPE, SIG_IGN)
        let count = connections
        let deadline = monotonicNanoseconds() + UInt64(seconds * 1e9)
        let tag = getpid()
        var fds: [Int32] = []
        var readers: [LineReader] = []
        var serials = [Int](repeating: 0, count: count)
        var names = [Int](repeating: 0, count: count)
        var checked = 0, busy = 0, other = 0
        /// A new name's login (`setUser`), or another answer to the open one (`setPassword`).
        func send(_ index: Int, newName: Bool) {
            serials[index] += 1
            let line: String
            if newName {
                names[index] += 1
                line = #"{"id":\#(serials[index]),"op":"setUser","user":"attacker-\#(tag)-\#(index)-\#(names[index])"}"#
            } else {
                line = #"{"id":\#(serials[index]),"op":"setPassword","password":"Wrong-Guess-71","challengeMode":0}"#
            }
            writeAll(fds[index], Array(line.utf8) + [0x0A])
        }
        var answering = [Bool](repeating: false, count: count)
        for index in 0..<count {
            let fd = connectUnix(socket)
            fds.append(fd)
            readers.append(LineReader(fd: fd))
            send(index, newName: true)
        }
        var polls = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        while monotonicNanoseconds() < deadline {
            guard poll(&polls, nfds_t(polls.count), 100) > 0 else { continue }
            for index in 0..<count where polls[index].revents != 0 {
                let reply = String(decoding: readers[index].line(), as: UTF8.self)
                if answering[index] {
                    if reply.contains(#""error":{"code":14"#) { busy += 1 }
                    else if reply.contains(#""code":102"#) || reply.contains(#""code":153"#) { checked += 1 }
                    else { other += 1 }
                }
                // After the name is blocked (153, then getUser) a fresh name; else answer again.
                let fresh = answering[index] && (reply.contains(#""event":"getUser""#) || reply.contains(#""error":{"code":148"#))
                answering[index] = !fresh
                send(index, newName: fresh)
            }
        }
        for fd in fds { close(fd) }
        clock.report([("mode", "attack"), ("connections", "\(count)"), ("checked", "\(checked)"), ("busy", "\(busy)"),
                      ("other", "\(other)")])
    }
}
