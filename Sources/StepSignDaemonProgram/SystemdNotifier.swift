#if canImport(Glibc)
import Glibc
#endif

/// `sd_notify(3)` without libsystemd: each message is one datagram on the `AF_UNIX`
/// `SOCK_DGRAM` socket named by `$NOTIFY_SOCKET` (a path, or an abstract name written with a
/// leading `@`).
///
/// Messages are newline-separated `KEY=VALUE` assignments (`READY=1`, `RELOADING=1`,
/// `STOPPING=1`, `WATCHDOG=1`, `STATUS=…`). Sending is best effort, as with `sd_notify`: a
/// failure is reported to the caller's `onError` and otherwise ignored — systemd notices a
/// service that never gets ready or stops pinging its watchdog.
struct SystemdNotifier: Sendable {
    /// `$NOTIFY_SOCKET` as systemd wrote it.
    let socketName: String
    /// How often to send `WATCHDOG=1` (half of `WATCHDOG_USEC`), or nil when systemd does not
    /// watch this process.
    let watchdogInterval: Duration?

    /// The notifier systemd asked for through the environment, or nil when `NOTIFY_SOCKET` is
    /// unset. Unsets `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` so that programs the
    /// daemon starts (the forgot-password notifier) cannot speak for it.
    static func fromEnvironment() -> SystemdNotifier? {
        func variable(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
        let socketName = variable("NOTIFY_SOCKET")
        let watchdog = Self.watchdogInterval(usec: variable("WATCHDOG_USEC"), pid: variable("WATCHDOG_PID"), ourPID: getpid())
        unsetenv("NOTIFY_SOCKET")
        unsetenv("WATCHDOG_USEC")
        unsetenv("WATCHDOG_PID")
        guard let socketName, !socketName.isEmpty else { return nil }
        return SystemdNotifier(socketName: socketName, watchdogInterval: watchdog)
    }

    /// Half of `WATCHDOG_USEC`, when it is a positive number and `WATCHDOG_PID` is unset or
    /// names `ourPID` (as `sd_watchdog_enabled(3)` decides).
    static func watchdogInterval(usec: String?, pid: String?, ourPID: Int32) -> Duration? {
        guard let usec, let microseconds = UInt64(usec), microseconds > 0 else { return nil }
        if let pid, Int32(pid) != ourPID { return nil }
        return .microseconds(Int64(clamping: microseconds / 2))
    }

    /// Sends `fields` (`["READY=1", "STATUS=listening"]`) as one datagram.
    func send(_ fields: [String]) throws(NotifyError) {
        let message = Array((fields.joined(separator: "\n") + "\n").utf8)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket", errno) }
        defer { close(fd) }

        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketName.utf8)
        let abstract = path.first == UInt8(ascii: "@")
        if abstract { path[0] = 0 }  // Linux abstract namespace: a leading NUL, no terminator
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity else { throw .nameTooLong(socketName) }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        let length = socklen_t(pathOffset + path.count + (abstract ? 0 : 1))

        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                message.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), socketAddress, length) }
            }
        }
        guard sent == message.count else { throw .system("sendto \(socketName)", sent < 0 ? errno : EMSGSIZE) }
    }

    /// `RELOADING=1` with `MONOTONIC_USEC` (the `CLOCK_MONOTONIC` time in microseconds, which
    /// systemd 253 and later require with it).
    static func reloadingFields(status: String) -> [String] {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let microseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
        return ["RELOADING=1", "MONOTONIC_USEC=\(microseconds)", "STATUS=\(status)"]
    }

    /// Sends `WATCHDOG=1` every `watchdogInterval` until the task is cancelled; returns at
    /// once when systemd does not watch this process.
    func runWatchdog(onError: @Sendable (NotifyError) -> Void) async {
        guard let interval = watchdogInterval else { return }
        while !Task.isCancelled {
            do { try send(["WATCHDOG=1"]) } catch { onError(error) }
            do { try await Task.sleep(for: interval) } catch { return }
        }
    }
}

/// Why a notification could not be sent.
enum NotifyError: Error, CustomStringConvertible {
    case nameTooLong(String)
    case system(String, Int32)

    var description: String {
        switch self {
        case let .nameTooLong(name): "NOTIFY_SOCKET \(name) is too long for a Unix socket address"
        case let .system(call, code): "\(call): \(String(cString: strerror(code)))"
        }
    }
}
