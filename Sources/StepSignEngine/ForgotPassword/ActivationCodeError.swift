import StepSignCrypto

/// Why an activation code could not be made or checked. No case carries the code.
public enum ActivationCodeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The requested length is outside `ActivationCode.lengths`.
    case lengthOutOfRange(Int)
    /// libcrypto could not produce random bytes.
    case randomness(OpenSSLError)
    /// The code could not be hashed, or the stored hash is unusable.
    case hash(PasswordHashError)

    public var description: String {
        switch self {
        case let .lengthOutOfRange(length):
            "activation code length \(length) is outside \(ActivationCode.lengths.lowerBound)...\(ActivationCode.lengths.upperBound)"
        case let .randomness(error): "activation code: no randomness: \(error)"
        case let .hash(error): "activation code hash: \(error)"
        }
    }
}
