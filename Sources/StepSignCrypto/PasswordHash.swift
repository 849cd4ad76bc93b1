/// Stored password hashes: scrypt through OpenSSL, self-describing, compared in constant time.
///
/// Format (one line, ASCII):
///
///     $scrypt$ln=<log2 n>,r=<r>,p=<p>$<salt>$<hash>
///
/// e.g. `$scrypt$ln=15,r=8,p=1$<22 chars>$<43 chars>`, where salt and hash are unpadded
/// base64url (16 and 32 bytes when made here). The numbers are decimal without leading zeros.
///
/// Passwords are hashed as the UTF-8 bytes of the `String` given, without Unicode
/// normalization: a password typed in NFD does not match one set in NFC. Clients send what
/// the user typed; stepsign does not second-guess it.
public enum PasswordHash {
    /// The largest parameters `verify` and `make` accept, so a stored string cannot make
    /// stepsign allocate or compute without bound.
    public enum Limits {
        /// Largest log2(n): 20.
        public static let maximumLogN = 20
        /// Largest r: 32.
        public static let maximumR: UInt32 = 32
        /// Largest p: 16.
        public static let maximumP: UInt32 = 16
        /// Largest memory, 128·n·r bytes: 256 MiB.
        public static let maximumMemory: UInt64 = 256 << 20
        /// Salt length in bytes.
        public static let saltLengths = 8...64
        /// Hash length in bytes.
        public static let hashLengths = 16...64
    }

    static let saltLength = 16
    static let hashLength = 32

    /// A new hash of `password` with a random 16-byte salt.
    public static func make(password: String, parameters: ScryptParameters = .default) throws(PasswordHashError) -> String {
        let logN = try validate(parameters)
        let salt: [UInt8]
        do { salt = try SecureRandom.bytes(count: saltLength) } catch { throw .openSSL(error) }
        let hash = try derive(password: password, salt: salt, parameters: parameters, length: hashLength)
        return "$scrypt$ln=\(logN),r=\(parameters.r),p=\(parameters.p)$\(Base64URL.encode(salt))$\(Base64URL.encode(hash))"
    }

    /// True when `password` matches `encoded`. The derived hash is compared with
    /// `CRYPTO_memcmp`. Throws when `encoded` is malformed or its parameters exceed `Limits`.
    public static func verify(password: String, encoded: String) throws(PasswordHashError) -> Bool {
        let (parameters, salt, expected) = try parse(encoded)
        let actual = try derive(password: password, salt: salt, parameters: parameters, length: expected.count)
        return ConstantTime.equals(actual, expected)
    }

    /// A valid hash of a random password, for users that do not exist: verifying against it
    /// costs the same as against a real hash and never matches. Make one at start-up and
    /// reuse it.
    ///
    /// Throws `.parametersOutOfRange` when `parameters` exceed `Limits`, and `.openSSL` when
    /// libcrypto cannot produce randomness or run scrypt.
    public static func dummy(parameters: ScryptParameters = .default) throws(PasswordHashError) -> String {
        let random: [UInt8]
        do { random = try SecureRandom.bytes(count: 32) } catch { throw .openSSL(error) }
        return try make(password: Base64URL.encode(random), parameters: parameters)
    }

    /// The parameters stored in `encoded`, e.g. to decide whether to rehash on login.
    public static func parameters(of encoded: String) throws(PasswordHashError) -> ScryptParameters {
        try parse(encoded).parameters
    }

    private static func derive(password: String, salt: [UInt8], parameters: ScryptParameters, length: Int) throws(PasswordHashError) -> [UInt8] {
        do {
            return try Scrypt.derive(password: Array(password.utf8), salt: salt, parameters: parameters, length: length)
        } catch {
            throw .openSSL(error)
        }
    }

    @discardableResult
    private static func validate(_ parameters: ScryptParameters) throws(PasswordHashError) -> Int {
        guard let logN = parameters.logN, logN <= Limits.maximumLogN else {
            throw .parametersOutOfRange("n must be a power of two from 2 to 2^\(Limits.maximumLogN)")
        }
        guard (1...Limits.maximumR).contains(parameters.r) else { throw .parametersOutOfRange("r must be 1...\(Limits.maximumR)") }
        guard (1...Limits.maximumP).contains(parameters.p) else { throw .parametersOutOfRange("p must be 1...\(Limits.maximumP)") }
        guard 128 * parameters.n * UInt64(parameters.r) <= Limits.maximumMemory else {
            throw .parametersOutOfRange("128·n·r exceeds \(Limits.maximumMemory) bytes")
        }
        return logN
    }

    private static func parse(_ encoded: String) throws(PasswordHashError) -> (parameters: ScryptParameters, salt: [UInt8], hash: [UInt8]) {
        let fields = encoded.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0].isEmpty, fields[1] == "scrypt" else {
            throw .malformed("expected $scrypt$ln=…,r=…,p=…$salt$hash")
        }
        let settings = fields[2].split(separator: ",", omittingEmptySubsequences: false)
        guard settings.count == 3,
              let logN = number(settings[0], named: "ln"),
              let r = number(settings[1], named: "r"),
              let p = number(settings[2], named: "p")
        else { throw .malformed("expected ln=…,r=…,p=… in that order") }
        guard (1...Limits.maximumLogN).contains(logN) else {
            throw .parametersOutOfRange("ln must be 1...\(Limits.maximumLogN)")
        }
        guard r <= Limits.maximumR, p <= Limits.maximumP else { throw .parametersOutOfRange("r or p too large") }
        let parameters = ScryptParameters(n: 1 << UInt64(logN), r: UInt32(r), p: UInt32(p))
        try validate(parameters)
        guard let salt = Base64URL.decode(String(fields[3])), Limits.saltLengths.contains(salt.count) else {
            throw .malformed("salt must be base64url of \(Limits.saltLengths) bytes")
        }
        guard let hash = Base64URL.decode(String(fields[4])), Limits.hashLengths.contains(hash.count) else {
            throw .malformed("hash must be base64url of \(Limits.hashLengths) bytes")
        }
        return (parameters, salt, hash)
    }

    /// The decimal value of `name=digits` (no sign, no leading zero, at most 4 digits).
    private static func number(_ text: Substring, named name: String) -> Int? {
        guard text.hasPrefix(name + "=") else { return nil }
        let digits = text.dropFirst(name.count + 1)
        guard (1...4).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              digits.count == 1 || digits.first != "0"
        else { return nil }
        return Int(digits)
    }
}
