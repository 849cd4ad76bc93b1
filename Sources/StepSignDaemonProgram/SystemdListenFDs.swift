#if canImport(Glibc)
import Glibc
#endif

/// systemd socket activation (`sd_listen_fds(3)`): the listening sockets are file
/// descriptors 3, 4, … when `LISTEN_PID` is this process and `LISTEN_FDS` says how many.
/// `LISTEN_FDNAMES` names them (the socket units' `FileDescriptorName=`): the one named
/// `agent` is the SSH agent's socket (SPEC §3.5), the first other one the main socket.
enum SystemdListenFDs {
    static let firstDescriptor: Int32 = 3
    /// The `FileDescriptorName=` of the SSH agent's socket unit.
    static let agentName = "agent"

    /// The sockets systemd passed.
    struct Inherited {
        var main: Int32?
        var agent: Int32?
    }

    /// The inherited listening sockets, if systemd passed any; the variables are unset so
    /// child processes do not see them.
    static func inherited() -> Inherited {
        guard let pidText = getenv("LISTEN_PID").map({ String(cString: $0) }),
              let fdsText = getenv("LISTEN_FDS").map({ String(cString: $0) }),
              let pid = Int32(pidText), pid == getpid(),
              let count = Int(fdsText), count >= 1
        else { return Inherited() }
        let names = getenv("LISTEN_FDNAMES").map { String(cString: $0).split(separator: ":", omittingEmptySubsequences: false).map(String.init) } ?? []
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        var inherited = Inherited()
        for index in 0..<min(count, 64) {
            let descriptor = firstDescriptor + Int32(index)
            if index < names.count, names[index] == agentName {
                if inherited.agent == nil { inherited.agent = descriptor }
            } else if inherited.main == nil {
                inherited.main = descriptor
            }
        }
        return inherited
    }
}
