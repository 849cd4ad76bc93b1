#if canImport(Glibc)
import Glibc
#endif

/// Unbuffered writes to the standard streams.
enum FileHandleOutput {
    static func standardError(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }

    static func standardOutput(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { write(1, $0.baseAddress, $0.count) }
    }
}
