internal import CLibcrypto

/// HMAC-SHA-256 (RFC 2104) through libcrypto's one-shot `HMAC`.
public enum HMACSHA256 {
    /// The 32-byte MAC of `message` under `key`.
    public static func mac(key: [UInt8], message: some Collection<UInt8>) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let md = SHA256.algorithm
        let ok = key.withUnsafeBufferPointer { keyBuffer in
            Array(message).withUnsafeBufferPointer { buffer in
                HMAC(md, keyBuffer.baseAddress, Int32(keyBuffer.count), buffer.baseAddress, buffer.count, &out, &length)
            }
        }
        // HMAC with SHA-256 and no engine fails only when allocation fails.
        precondition(ok != nil && length == 32, "HMAC(SHA-256) failed: \(OpenSSLError.drain("HMAC"))")
        return out
    }
}
