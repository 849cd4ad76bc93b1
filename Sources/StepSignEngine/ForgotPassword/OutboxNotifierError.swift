import StepSignSystem

/// Why the outbox could not take a message. No case carries the code.
public enum OutboxNotifierError: Error, Sendable, CustomStringConvertible {
    /// The user ID has no usable file name (empty, or longer than 255 bytes once escaped).
    case unusableUserName(String)
    /// The outbox entry exists and is not a regular file (a FIFO, device, directory…).
    case notARegularFile(path: String)
    /// A system call failed.
    case system(SystemError)

    public var description: String {
        switch self {
        case let .unusableUserName(user): "outbox: no file name for user \"\(user)\" (empty or too long once escaped)"
        case let .notARegularFile(path): "outbox: \(path) is not a regular file"
        case let .system(error): "outbox: \(error)"
        }
    }
}
