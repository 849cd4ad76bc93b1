#if canImport(Glibc)
import Glibc
import StepSignSystem
#endif

/// Reads newline-terminated reply lines from a blocking socket (the simple modes).
final class LineReader {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(fd: Int32) { self.fd = fd }

    /// The next line without its newline; exits if the server closes the connection first.
    func line() -> [UInt8] {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = retryingOnEINTR { chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }
            guard n > 0 else { fail("the server closed the connection") }
            buffer.append(contentsOf: chunk[..<n])
        }
    }
}
