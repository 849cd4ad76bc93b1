internal import CLibcrypto

/// A failure inside libcrypto, with the OpenSSL error queue drained into it.
///
/// Every call into libcrypto that can fail is checked; on failure the error queue is read at
/// once (no suspension point in between, so no other task's errors can mix in) and cleared.
public struct OpenSSLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What stepsign was doing, e.g. `"EVP_DigestSign"`.
    public let operation: String
    /// The entries of the OpenSSL error queue, oldest first, as OpenSSL formats them.
    public let queue: [String]

    public init(operation: String, queue: [String]) {
        self.operation = operation
        self.queue = queue
    }

    /// Drains the calling thread's OpenSSL error queue into an error for `operation`.
    public static func drain(_ operation: String) -> OpenSSLError {
        var entries: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            entries.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return OpenSSLError(operation: operation, queue: entries)
    }

    public var description: String {
        queue.isEmpty ? "\(operation) failed" : "\(operation) failed: \(queue.joined(separator: "; "))"
    }
}

/// Throws `OpenSSLError` for `operation` unless `result` is 1 (libcrypto's success value).
@inline(__always)
func check(_ result: Int32, _ operation: String) throws(OpenSSLError) {
    guard result == 1 else { throw OpenSSLError.drain(operation) }
}
