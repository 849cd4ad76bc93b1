import StepSignCrypto
#if canImport(Glibc)
import Glibc
#endif

/// Activation codes for forgot-password (SPEC §2): random, typed by a person, stored hashed.
///
/// A code is `length` characters of Crockford's base32 alphabet, `0-9 A-Z` without `I L O U`
/// (32 symbols, 5 bits each). The default length 8 gives 40 bits: with `max_attempts` 3 a
/// guesser online wins with probability 3 / 2^40 ≈ 2.7·10⁻¹²; offline, each guess against a
/// stolen hash costs one scrypt run (see `hash(_:parameters:)`).
///
/// Characters are drawn with rejection sampling from `SecureRandom.bytes`, so every symbol is
/// equally likely whatever the alphabet's size (with 32 symbols nothing is ever rejected,
/// since 256 is a multiple of 32; the loop is there so the alphabet can change safely).
public enum ActivationCode {
    /// The symbols of a code, in Crockford base32 order.
    public static let alphabet: [Character] = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    /// The length of a code unless the configuration says otherwise.
    public static let defaultLength = 8

    /// The lengths `generate(length:)` accepts (`forgot_password.code_length` allows 6 to 32).
    public static let lengths = 1...64

    /// Bits of entropy of a code of `length` characters: `length · log2(32)` = 5 per character.
    public static func entropyBits(length: Int) -> Double {
        Double(length) * log2(Double(alphabet.count))
    }

    /// A new code of `length` uniformly random characters of `alphabet`.
    public static func generate(length: Int = defaultLength) throws(ActivationCodeError) -> String {
        guard lengths.contains(length) else { throw .lengthOutOfRange(length) }
        let indices = try uniformIndices(count: length, below: alphabet.count)
        return String(indices.map { alphabet[$0] })
    }

    /// `typed` as the code it is meant to be, so users may type loosely: letters uppercased,
    /// spaces, tabs, `-` and `_` removed, and Crockford's look-alikes mapped (`O` → `0`,
    /// `I` and `L` → `1`). Anything else is kept, so a wrong character still fails to match.
    public static func normalize(_ typed: String) -> String {
        var out = ""
        out.reserveCapacity(typed.utf8.count)
        for character in typed {
            switch character {
            case " ", "\t", "-", "_", "\u{00A0}": continue
            case "o", "O": out.append("0")
            case "i", "I", "l", "L": out.append("1")
            default: out += character.uppercased()
            }
        }
        return out
    }

    /// The stored form of `code` (normalized first): a `PasswordHash` string made with
    /// `parameters`, the configured scrypt cost of passwords.
    ///
    /// Why scrypt and not SHA-256: a code has only 40 bits, so a plain hash in a leaked
    /// database would be reversed in minutes; scrypt makes each offline guess cost as much as
    /// a password guess. The price is one scrypt run per code made or checked, which
    /// `max_attempts` bounds. Call this off the cooperative pool (`NIOThreadPool`).
    public static func hash(_ code: String, parameters: ScryptParameters) throws(ActivationCodeError) -> String {
        do {
            return try PasswordHash.make(password: normalize(code), parameters: parameters)
        } catch {
            throw .hash(error)
        }
    }

    /// True when `typed`, normalized, is the code `encoded` was made from. Compared in
    /// constant time by `PasswordHash.verify`. Call this off the cooperative pool.
    public static func matches(_ typed: String, hash encoded: String) throws(ActivationCodeError) -> Bool {
        do {
            return try PasswordHash.verify(password: normalize(typed), encoded: encoded)
        } catch {
            throw .hash(error)
        }
    }

    /// `count` integers uniformly distributed in `0..<bound` (`bound` at most 256): each from
    /// one random byte, where bytes at or above the largest multiple of `bound` are drawn again.
    static func uniformIndices(count: Int, below bound: Int) throws(ActivationCodeError) -> [Int] {
        precondition((1...256).contains(bound), "uniformIndices: bound \(bound) is not 1...256")
        let limit = 256 - 256 % bound
        var out: [Int] = []
        out.reserveCapacity(count)
        while out.count < count {
            let bytes: [UInt8]
            do { bytes = try SecureRandom.bytes(count: count - out.count + 4) } catch { throw .randomness(error) }
            for byte in bytes where Int(byte) < limit && out.count < count {
                out.append(Int(byte) % bound)
            }
        }
        return out
    }
}
