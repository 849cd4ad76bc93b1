internal import CLibcrypto
import Synchronization

/// Random bytes for identifiers (the random bits of a UUIDv7 signature ID), drawn from
/// OpenSSL's DRBG a page at a time.
///
/// Each `RAND_bytes` call takes the DRBG's lock, asks the process ID (its fork check), looks up
/// its parameters by name and runs AES-CTR: for the ten bytes of a signature ID that was a
/// call per signature beside the ECDSA nonce's own (issue 43). Here one call fills 4 KiB, and
/// IDs take their bytes from it under a mutex. The bytes are the DRBG's, only handed out later;
/// an ID's random bits are not a secret (the ID is public), only unique. Not for keys, codes
/// or nonces: those call ``SecureRandom`` (the DRBG) each time. stepsignd starts child
/// processes with `posix_spawn` and never forks, so no two processes share a page.
final class IdentifierRandom: Sendable {
    /// The one pool of the process.
    static let shared = IdentifierRandom()

    private struct Page {
        var bytes = [UInt8](repeating: 0, count: IdentifierRandom.pageSize)
        /// How many bytes from the start have been handed out; `pageSize` when none is left.
        var used = IdentifierRandom.pageSize
    }

    private static let pageSize = 4096
    private let page = Mutex(Page())

    /// `count` (at most 16) random bytes, the first `count` bytes of the pair's memory; or why
    /// the DRBG could not give them.
    func next(_ count: Int) -> Result<(UInt64, UInt64), OpenSSLError> {
        precondition(count >= 0 && count <= 16, "IdentifierRandom: at most 16 bytes at a time")
        return page.withLock { page -> Result<(UInt64, UInt64), OpenSSLError> in
            if Self.pageSize - page.used < count {
                let filled = page.bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
                guard filled == 1 else { return .failure(OpenSSLError.drain("RAND_bytes")) }
                page.used = 0
            }
            var value: (UInt64, UInt64) = (0, 0)
            let used = page.used
            page.bytes.withUnsafeBytes { source in
                withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[used..<used + count])) }
            }
            page.used += count
            return .success(value)
        }
    }
}
