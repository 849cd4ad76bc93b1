#if canImport(Glibc)
import Glibc
#endif
import StepSignSystem

/// Why ``StrictModes`` refused a file: which file, which path on its way is wrong, and how.
///
/// The daemon exits 78 (EX_CONFIG) with this text at start, and keeps the configuration in
/// force on reload, logging it. It names paths, uids and modes, never file contents.
public struct StrictModesError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with `path`.
    public enum Problem: Sendable, Equatable {
        /// `stat` or `realpath` failed with `errno`.
        case cannotCheck(errno: Int32)
        /// Not a directory, or not a regular file, as the role needs.
        case wrongType(expected: String)
        /// Owned by `uid`, which is not one of `allowed`.
        case owner(uid: UInt32, allowed: [UInt32])
        /// Group or others may write it (`mode` is the permission bits).
        case writableByGroupOrOthers(mode: UInt32)
        /// A directory on the way that group or others may write and that has no sticky bit,
        /// so they could rename the checked file away and put their own in its place.
        case directoryWritableByGroupOrOthers(mode: UInt32)
        /// Group or others may read, write or run it (private keys: as sshd refuses a key file
        /// that is "too open").
        case accessibleByGroupOrOthers(mode: UInt32)
    }

    /// The role of the checked file: "state directory", "configuration file", "idv.trusted_keys", …
    public var role: String
    /// The file the role names (as configured).
    public var file: String
    /// The path found wrong: `file` itself, or a directory on its way.
    public var path: String
    public var problem: Problem

    public init(role: String, file: String, path: String, problem: Problem) {
        self.role = role
        self.file = file
        self.path = path
        self.problem = problem
    }

    public var description: String {
        let subject = path == file ? "\(role) \(file)" : "\(role) \(file): directory \(path)"
        return "strict modes: \(subject) \(problem)"
    }
}

extension StrictModesError.Problem: CustomStringConvertible {
    public var description: String {
        switch self {
        case let .cannotCheck(errno):
            "cannot be checked: \(String(cString: strerror(errno)))"
        case let .wrongType(expected):
            "is not \(expected)"
        case let .owner(uid, allowed):
            "is owned by uid \(uid); it must belong to " + allowed.map { $0 == 0 ? "root" : "uid \($0)" }.joined(separator: " or ")
        case let .writableByGroupOrOthers(mode):
            "is writable by group or others (mode \(Self.octal(mode))); only its owner may write it"
        case let .directoryWritableByGroupOrOthers(mode):
            "is writable by group or others without the sticky bit (mode \(Self.octal(mode)))"
        case let .accessibleByGroupOrOthers(mode):
            "is accessible by group or others (mode \(Self.octal(mode))); it must be 0600 or stricter"
        }
    }

    private static func octal(_ mode: UInt32) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

extension StrictModesError: ErrnoCarrying {
    /// The errno of a `stat`, `realpath` or `opendir` that failed (``Problem/cannotCheck(errno:)``):
    /// EIO there at start is a fault that may pass, not a mode to fix.
    package var carriedErrno: Int32? {
        if case let .cannotCheck(code) = problem { code } else { nil }
    }

    package var carriedPath: String? { path }
}
