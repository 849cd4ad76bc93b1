#if canImport(Glibc)
import Glibc
import StepSignSystem
#endif

/// Prints `stepsign-loadgen: message` and exits 2 (a usage or connection error).
func fail(_ message: String) -> Never {
    printError("stepsign-loadgen: \(message)")
    exit(2)
}

/// Writes `text` and a newline to stderr.
func printError(_ text: String) {
    var bytes = Array(text.utf8)
    bytes.append(0x0A)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

/// A connected Unix stream socket (close-on-exec); exits on failure.
func connectUnix(_ path: String) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { fail("socket: \(String(cString: strerror(errno)))") }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { fail("socket path too long") }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (i, byte) in bytes.enumerated() { raw[i] = byte }
    }
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard result == 0 else { fail("connect \(path): \(String(cString: strerror(errno)))") }
    return fd
}

func setNonBlocking(_ fd: Int32) {
    let flags = fcntl(fd, F_GETFL)
    _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
}

/// Writes all of `bytes` on a blocking socket (the simple modes); exits on failure.
func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
        let n = retryingOnEINTR { bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } }
        guard n > 0 else { fail("write: \(String(cString: strerror(errno)))") }
        offset += n
    }
}

/// Whether `needle` occurs in `haystack` (memchr for its first byte, then memcmp).
func contains(_ haystack: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
    guard let base = haystack.baseAddress, let first = needle.first, haystack.count >= needle.count else { return false }
    return needle.withUnsafeBytes { needleBytes in
        var offset = 0
        let last = haystack.count - needle.count
        while offset <= last, let found = memchr(base + offset, Int32(first), last - offset + 1) {
            let at = base.distance(to: UnsafeRawPointer(found))
            if memcmp(base + at, needleBytes.baseAddress!, needle.count) == 0 { return true }
            offset = at + 1
        }
        return false
    }
}
