internal import CLibcrypto

/// C strings that outlive any `OSSL_PARAM` array pointing at them.
///
/// An `OSSL_PARAM` stores its key (and a UTF-8 string value) by pointer, so the pointer must
/// stay valid until libcrypto has read the array. Swift's implicit `String` → `char *` bridge
/// is only valid for one call; these are copied once and never freed.
enum ParameterNames {
    nonisolated(unsafe) static let groupName = permanent(OSSL_PKEY_PARAM_GROUP_NAME)
    nonisolated(unsafe) static let publicKey = permanent(OSSL_PKEY_PARAM_PUB_KEY)
    nonisolated(unsafe) static let p256 = permanent(SN_X9_62_prime256v1)
    nonisolated(unsafe) static let password = permanent(OSSL_KDF_PARAM_PASSWORD)
    nonisolated(unsafe) static let salt = permanent(OSSL_KDF_PARAM_SALT)
    nonisolated(unsafe) static let scryptN = permanent(OSSL_KDF_PARAM_SCRYPT_N)
    nonisolated(unsafe) static let scryptR = permanent(OSSL_KDF_PARAM_SCRYPT_R)
    nonisolated(unsafe) static let scryptP = permanent(OSSL_KDF_PARAM_SCRYPT_P)
    nonisolated(unsafe) static let scryptMaxMemory = permanent(OSSL_KDF_PARAM_SCRYPT_MAXMEM)

    private static func permanent(_ text: String) -> UnsafeMutablePointer<CChar> {
        guard let copy = strdup(text) else { fatalError("strdup: out of memory") }
        return copy
    }
}
