internal import CLibcrypto

/// The scrypt key derivation function (RFC 7914) through OpenSSL's `EVP_KDF` "SCRYPT".
public enum Scrypt {
    /// `length` bytes derived from `password` and `salt`.
    ///
    /// Sets OpenSSL's `maxmem_bytes` to what the parameters need (OpenSSL's default cap of
    /// 32 MiB would refuse r = 8 with n = 2^15 and above). Callers that take parameters from
    /// untrusted input must cap them first (as `PasswordHash.verify` does).
    public static func derive(password: [UInt8], salt: [UInt8], parameters: ScryptParameters, length: Int) throws(OpenSSLError) -> [UInt8] {
        guard length > 0, parameters.logN != nil, parameters.r > 0, parameters.p > 0,
              let memory = parameters.memoryBytes
        else {
            throw OpenSSLError(operation: "EVP_KDF_derive(SCRYPT)", queue: ["invalid scrypt parameters or length"])
        }
        guard let kdf = EVP_KDF_fetch(nil, "SCRYPT", nil) else { throw .drain("EVP_KDF_fetch(SCRYPT)") }
        defer { EVP_KDF_free(kdf) }
        guard let ctx = EVP_KDF_CTX_new(kdf) else { throw .drain("EVP_KDF_CTX_new") }
        defer { EVP_KDF_CTX_free(ctx) }

        // OSSL_PARAM points at its values, so they live in buffers that outlast the call.
        let passwordCopy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(password.count, 1), alignment: 1)
        defer {
            OPENSSL_cleanse(passwordCopy.baseAddress, passwordCopy.count)
            passwordCopy.deallocate()
        }
        password.withUnsafeBytes { passwordCopy.copyMemory(from: $0) }
        let saltCopy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(salt.count, 1), alignment: 1)
        defer { saltCopy.deallocate() }
        salt.withUnsafeBytes { saltCopy.copyMemory(from: $0) }
        let wide = UnsafeMutablePointer<UInt64>.allocate(capacity: 2)
        defer { wide.deallocate() }
        wide[0] = parameters.n
        wide[1] = memory + (1 << 20) // slack for OpenSSL's own bookkeeping
        let narrow = UnsafeMutablePointer<UInt32>.allocate(capacity: 2)
        defer { narrow.deallocate() }
        narrow[0] = parameters.r
        narrow[1] = parameters.p

        var params = [
            OSSL_PARAM_construct_octet_string(ParameterNames.password, passwordCopy.baseAddress, password.count),
            OSSL_PARAM_construct_octet_string(ParameterNames.salt, saltCopy.baseAddress, salt.count),
            OSSL_PARAM_construct_uint64(ParameterNames.scryptN, wide),
            OSSL_PARAM_construct_uint32(ParameterNames.scryptR, narrow),
            OSSL_PARAM_construct_uint32(ParameterNames.scryptP, narrow + 1),
            OSSL_PARAM_construct_uint64(ParameterNames.scryptMaxMemory, wide + 1),
            OSSL_PARAM_construct_end(),
        ]
        var out = [UInt8](repeating: 0, count: length)
        try check(EVP_KDF_derive(ctx, &out, length, &params), "EVP_KDF_derive(SCRYPT)")
        return out
    }
}
