#if canImport(Glibc)
import Glibc
#endif

/// Lines for people and scripts on standard output and standard error, written straight to the
/// descriptors (nothing buffered to flush before an exit), short writes and EINTR retried.
public enum StandardStreams {
    /// Writes `line` (and a newline, if it has none) to standard output.
    public static func out(_ line: String) { write(line, to: 1) }

    /// Writes `line` (and a newline, if it has none) to standard error.
    public static func error(_ line: String) { write(line, to: 2) }

    private static func write(_ line: String, to fd: Int32) {
        let bytes = Array((line.hasSuffix("\n") ? line : line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = retryingOnEINTR { bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } }
            guard written > 0 else { return }
            offset += written
        }
    }
}
