import StepSignConfig
import StepSignCrypto

extension StepSignConfiguration.Password {
    /// The scrypt cost new password hashes are made with (`password.scrypt_n`, `_r`, `_p`).
    public var scryptParameters: ScryptParameters {
        ScryptParameters(n: UInt64(scryptN), r: UInt32(scryptR), p: UInt32(scryptP))
    }

    /// The common-password list in force: `common_passwords_file`, else the built-in list.
    public func loadCommonPasswords() throws(ConfigError) -> CommonPasswords {
        commonPasswordsFile.isEmpty ? .builtIn : try CommonPasswords(contentsOf: commonPasswordsFile)
    }
}
