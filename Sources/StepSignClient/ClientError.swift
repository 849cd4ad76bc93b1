#if canImport(Glibc)
import Glibc
#endif

/// Why talking to the daemon failed.
public enum ClientError: Error, CustomStringConvertible {
    /// A system call failed.
    case system(String, Int32)
    /// The socket path does not fit in `sockaddr_un`.
    case pathTooLong(String)
    /// The daemon closed the connection.
    case closed
    /// No reply within the time limit.
    case timedOut
    /// A reply line that is not the JSON object SPEC §3 describes.
    case malformedReply(String)

    public var description: String {
        switch self {
        case let .system(call, code): "\(call): \(String(cString: strerror(code)))"
        case let .pathTooLong(path): "socket path too long: \(path)"
        case .closed: "the daemon closed the connection"
        case .timedOut: "no reply from the daemon in time"
        case let .malformedReply(line): "malformed reply: \(line)"
        }
    }
}
