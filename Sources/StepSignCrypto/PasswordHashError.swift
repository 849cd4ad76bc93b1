/// Why a password hash could not be made or checked.
public enum PasswordHashError: Error, Sendable, Equatable {
    /// The stored string is not in `PasswordHash`'s format.
    case malformed(String)
    /// The parameters are outside what stepsign accepts (see `PasswordHash.Limits`).
    case parametersOutOfRange(String)
    /// libcrypto failed (randomness or the KDF itself).
    case openSSL(OpenSSLError)
}
