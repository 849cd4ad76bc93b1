internal import CLibcrypto

/// The passphrase callback of every private key read from encrypted PEM.
enum PassphraseCallback {
    /// `pem_password_cb` that hands libcrypto the passphrase bytes (which may contain NUL,
    /// unlike the default callback's C string) and never prompts on a terminal.
    /// `userdata` points at an `UnsafeRawBufferPointer`, or is nil when none was given.
    static let callback: @convention(c) (UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32 = {
        buffer, size, _, userdata in
        guard let buffer, let userdata else { return -1 }
        let secret = userdata.assumingMemoryBound(to: UnsafeRawBufferPointer.self).pointee
        guard secret.count <= Int(size) else { return -1 }
        if let base = secret.baseAddress, secret.count > 0 {
            UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: secret.count)
        }
        return Int32(secret.count)
    }
}
