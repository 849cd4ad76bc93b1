import Foundation
import StepSignCrypto

/// A random value that stands for a user's credentials as they are now (SPEC §3: a login
/// ends when the user's credentials change).
///
/// The store makes a new one whenever something happens after which no existing login of the
/// user may go on: the password changes, an admin expires it, the user is blocked. A user
/// added again under a removed user's name gets a new one too, so a login of the old user
/// never passes for the new one. A session keeps the token it logged in with and compares it
/// with the stored one before it acts on the login.
public struct CredentialToken: Sendable, Hashable, CustomStringConvertible {
    /// The token's bytes (``byteCount`` of them).
    public let bytes: Data

    /// How long a token is: 128 random bits.
    public static let byteCount = 16

    public init(bytes: Data) {
        self.bytes = bytes
    }

    /// A new random token (from OpenSSL's `RAND_bytes`).
    public static func random() throws -> CredentialToken {
        CredentialToken(bytes: Data(try SecureRandom.bytes(count: byteCount)))
    }

    /// Not the bytes: a token is not secret, but it has no business in logs either.
    public var description: String { "CredentialToken(\(bytes.count) bytes)" }
}
