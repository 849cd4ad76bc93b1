@testable import StepSignEngine
import StepSignConfig
import StepSignCrypto
import Testing

/// The configuration accepts exactly the scrypt parameters the password hasher can serve, so
/// a configuration that loads never makes `PasswordHash` fail at start or on reload.
@Suite("scrypt limits: configuration and hasher agree")
struct ScryptLimitsTests {
    private func password(_ text: String) throws -> StepSignConfiguration.Password {
        try StepSignConfiguration.parse("[password]\n" + text, file: "t.toml").password
    }

    /// A stored hash with `parameters`, to check them against the hasher's limits without
    /// running scrypt (`parameters(of:)` validates and does not derive).
    private func encoded(_ parameters: ScryptParameters) -> String {
        let logN = parameters.logN ?? 0
        return "$scrypt$ln=\(logN),r=\(parameters.r),p=\(parameters.p)$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    }

    @Test("the configuration's memory limit is the hasher's")
    func sameMemoryLimit() {
        #expect(UInt64(StepSignConfiguration.Password.maximumScryptMemory) == PasswordHash.Limits.maximumMemory)
    }

    @Test("the largest parameters the configuration accepts are within the hasher's limits", arguments: [
        "scrypt_n = 1048576\nscrypt_r = 2\nscrypt_p = 16\n",
        "scrypt_n = 65536\nscrypt_r = 32\nscrypt_p = 16\n",
        "scrypt_n = 262144\nscrypt_r = 8\n",
        "scrypt_n = 1024\nscrypt_r = 32\nscrypt_p = 16\n",
    ])
    func largestAcceptedAreHashable(text: String) throws {
        let parameters = try password(text).scryptParameters
        #expect(try PasswordHash.parameters(of: encoded(parameters)) == parameters)
    }

    @Test("one step past the memory limit is refused by both", arguments: [
        ("scrypt_n = 524288\nscrypt_r = 8\n", ScryptParameters(n: 524_288, r: 8, p: 1)),
        ("scrypt_n = 131072\nscrypt_r = 32\n", ScryptParameters(n: 131_072, r: 32, p: 1)),
    ])
    func pastTheLimitIsRefusedByBoth(text: String, parameters: ScryptParameters) throws {
        #expect(throws: ConfigError.self) { try password(text) }
        #expect(throws: PasswordHashError.self) { try PasswordHash.parameters(of: encoded(parameters)) }
        #expect(throws: PasswordHashError.self) { try PasswordHash.dummy(parameters: parameters) }
    }

    @Test("the default parameters (n = 2^15, r = 8) make a dummy hash")
    func defaultsHash() throws {
        let parameters = try password("scrypt_n = 32768\nscrypt_r = 8\n").scryptParameters
        let dummy = try PasswordHash.dummy(parameters: parameters)
        #expect(try PasswordHash.parameters(of: dummy) == parameters)
    }
}
