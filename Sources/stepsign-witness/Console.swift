#if canImport(Glibc)
import Glibc
#endif

/// Lines for people and scripts, written straight to the descriptors (no buffering to flush).
enum Console {
    static func out(_ line: String) { write(line, to: 1) }

    static func error(_ line: String) { write(line, to: 2) }

    private static func write(_ line: String, to fd: Int32) {
        let bytes = Array((line.hasSuffix("\n") ? line : line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
