import StepSignCrypto

/// The verification key of a forgot-password flow: a short random phrase that the client
/// shows next to the code prompt (`getActivationCode.verificationKey`) and that the delivered
/// message repeats, so the user can tell that the message they got belongs to the prompt
/// in front of them (and not to a flow someone else started in their name).
///
/// It is two words of `words` joined by `separator`, e.g. `maple-otter`: one random byte per
/// word, 256 words, so 16 bits. That is enough to make an accidental match unlikely
/// (1 in 65 536); it is not a secret and is never checked by stepsign, so it needs no more.
public enum VerificationKey {
    /// What joins the words.
    public static let separator: Character = "-"

    /// Words in a key.
    public static let wordCount = 2

    /// Bits of entropy of a key: 8 per word.
    public static let entropyBits = 16

    /// A new key of `wordCount` uniformly random words.
    public static func generate() throws(OpenSSLError) -> String {
        let bytes = try SecureRandom.bytes(count: wordCount)
        return bytes.map { words[Int($0)] }.joined(separator: String(separator))
    }
}
