internal import CLibcrypto

/// PKCS#8 PEM of private keys, read and written one way for every kind (P-256 signing keys,
/// the Ed25519 log key).
enum PrivateKeyPEM {
    /// The `EVP_PKEY` in `pem` (owned by the caller): PKCS#8, encrypted PKCS#8 (needs
    /// `passphrase`) or the traditional encrypted form. Never prompts on a terminal.
    static func read(_ pem: String, passphrase: [UInt8]?) throws(P256KeyError) -> OpaquePointer {
        let encrypted = pem.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") || pem.contains("Proc-Type: 4,ENCRYPTED")
        if encrypted && passphrase == nil { throw .passphraseRequired }
        let bio: MemoryBIO
        do { bio = try MemoryBIO(text: pem) } catch { throw .openSSL(error) }
        let loaded: OpaquePointer? = (passphrase ?? []).withUnsafeBytes { bytes in
            var secret = bytes
            return withUnsafeMutablePointer(to: &secret) { secretPointer in
                PEM_read_bio_PrivateKey_ex(bio.pointer, nil, callback,
                                           passphrase == nil ? nil : UnsafeMutableRawPointer(secretPointer), nil, nil)
            }
        }
        guard let pkey = loaded else {
            ERR_clear_error()
            throw encrypted ? .decryptionFailed : .malformed("not a PEM private key")
        }
        return pkey
    }

    /// `pkey` as PKCS#8 PEM. With a passphrase: encrypted PKCS#8 (`ENCRYPTED PRIVATE KEY`, PBES2
    /// with PBKDF2-HMAC-SHA256 and AES-256-CBC, OpenSSL's defaults); without: plain `PRIVATE KEY`.
    static func write(_ pkey: OpaquePointer, passphrase: [UInt8]?) throws(OpenSSLError) -> String {
        let bio = try MemoryBIO()
        if var secret = passphrase {
            defer { secret.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
            let count = Int32(secret.count)
            let result = secret.withUnsafeMutableBytes { bytes in
                PEM_write_bio_PKCS8PrivateKey(bio.pointer, pkey, EVP_aes_256_cbc(),
                                              bytes.baseAddress?.assumingMemoryBound(to: CChar.self), count, nil, nil)
            }
            try check(result, "PEM_write_bio_PKCS8PrivateKey")
        } else {
            try check(PEM_write_bio_PKCS8PrivateKey(bio.pointer, pkey, nil, nil, 0, nil, nil), "PEM_write_bio_PKCS8PrivateKey")
        }
        return bio.text()
    }

    /// `pem_password_cb` that hands libcrypto the passphrase bytes (which may contain NUL,
    /// unlike the default callback's C string) and never prompts on a terminal.
    /// `userdata` points at an `UnsafeRawBufferPointer`, or is nil when none was given.
    private static let callback: @convention(c) (UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32 = {
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
