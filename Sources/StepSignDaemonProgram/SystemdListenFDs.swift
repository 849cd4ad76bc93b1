#if canImport(Glibc)
import Glibc
#endif

/// systemd socket activation (`sd_listen_fds(3)`): the listening socket is file descriptor 3
/// when `LISTEN_PID` is this process and `LISTEN_FDS` is at least 1.
enum SystemdListenFDs {
    static let firstDescriptor: Int32 = 3

    /// The inherited listening socket, if systemd passed one; the variables are unset so
    /// child processes do not see them.
    static func inherited() -> Int32? {
        guard let pidText = getenv("LISTEN_PID").map({ String(cString: $0) }),
              let fdsText = getenv("LISTEN_FDS").map({ String(cString: $0) }),
              let pid = Int32(pidText), pid == getpid(),
              let count = Int(fdsText), count >= 1
        else { return nil }
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        return firstDescriptor
    }
}
