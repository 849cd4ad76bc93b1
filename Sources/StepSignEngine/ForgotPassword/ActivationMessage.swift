import struct Foundation.Date
import StepSignProtocol

/// What a notifier delivers to a user who asked to reset a forgotten password.
///
/// Its wire form (`json`, SPEC §6) is one compact JSON object with the members in this
/// order: `{"user":…,"verificationKey":…,"activationCode":…,"expiresAt":"2025-06-01T12:34:56Z"}`,
/// `expiresAt` being RFC 3339 in UTC with whole seconds (see `RFC3339Timestamp`).
///
/// `description` and the mirror leave the code out, so a message that ends up in a log line
/// or a test failure does not reveal it.
public struct ActivationMessage: NotifierMessage, Equatable, CustomStringConvertible, CustomReflectable {
    /// The user the code is for.
    public var user: String
    /// The key the client shows next to the prompt; the message repeats it.
    public var verificationKey: String
    /// The code itself, in the form it was made.
    public var activationCode: String
    /// When the code stops being accepted.
    public var expiresAt: Date

    public init(user: String, verificationKey: String, activationCode: String, expiresAt: Date) {
        self.user = user
        self.verificationKey = verificationKey
        self.activationCode = activationCode
        self.expiresAt = expiresAt
    }

    /// The JSON object, without a line end.
    public var json: [UInt8] {
        var writer = JSONWriter(capacity: 160 + user.utf8.count)
        writer.beginObject()
        writer.member("user", user)
        writer.member("verificationKey", verificationKey)
        writer.member("activationCode", activationCode)
        writer.member("expiresAt", RFC3339Timestamp.string(expiresAt))
        writer.endObject()
        return writer.bytes
    }

    /// The JSON object followed by `\n`: what the outbox appends and a notifier reads on stdin.
    public var jsonLine: [UInt8] { json + [0x0A] }

    public var description: String {
        "ActivationMessage(user: \(user), verificationKey: \(verificationKey), activationCode: <redacted>, expiresAt: \(RFC3339Timestamp.string(expiresAt)))"
    }

    public var customMirror: Mirror {
        Mirror(self, children: ["user": user, "verificationKey": verificationKey, "expiresAt": expiresAt], displayStyle: .struct)
    }
}
