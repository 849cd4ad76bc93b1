#if canImport(Glibc)
import Glibc
#endif

/// A failed system call, with the path it was about.
public struct SystemError: Error, Sendable, CustomStringConvertible {
    public var operation: String
    public var path: String
    public var errno: Int32

    public init(_ operation: String, path: String, errno: Int32 = Glibc.errno) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    public var description: String { "\(operation) \(path): \(String(cString: strerror(errno)))" }
}
