import StepSignFormat

/// The message numbers of the ssh-agent protocol (draft-miller-ssh-agent §5.1; OpenSSH's
/// PROTOCOL.agent) that the agent reads or writes.
enum SSHAgentMessage {
    static let failure: UInt8 = 5
    static let success: UInt8 = 6
    static let requestIdentities: UInt8 = 11
    static let identitiesAnswer: UInt8 = 12
    static let signRequest: UInt8 = 13
    static let signResponse: UInt8 = 14

    /// Names of the requests the agent refuses, for its log line (everything else:
    /// "message N").
    static let refusedNames: [UInt8: String] = [
        17: "ADD_IDENTITY", 18: "REMOVE_IDENTITY", 19: "REMOVE_ALL_IDENTITIES", 20: "ADD_SMARTCARD_KEY",
        21: "REMOVE_SMARTCARD_KEY", 22: "LOCK", 23: "UNLOCK", 25: "ADD_ID_CONSTRAINED", 26: "ADD_SMARTCARD_KEY_CONSTRAINED",
        27: "EXTENSION",
    ]

    /// A reply message with its length: `uint32` length, type, contents.
    static func frame(_ type: UInt8, _ contents: [UInt8] = []) -> [UInt8] {
        var writer = SSHWireWriter()
        writer.uint32(UInt32(1 + contents.count))
        writer.byte(type)
        return writer.bytes + contents
    }

    /// `SSH_AGENT_IDENTITIES_ANSWER`: `uint32` count, then each key's blob and comment.
    static func identities(_ keys: [(blob: [UInt8], comment: String)]) -> [UInt8] {
        var writer = SSHWireWriter()
        writer.uint32(UInt32(keys.count))
        for key in keys {
            writer.string(key.blob)
            writer.string(key.comment)
        }
        return frame(identitiesAnswer, writer.bytes)
    }

    /// `SSH_AGENT_SIGN_RESPONSE` with `signature` (a signature blob).
    static func signResponse(_ signature: [UInt8]) -> [UInt8] {
        var writer = SSHWireWriter()
        writer.string(signature)
        return frame(signResponse, writer.bytes)
    }
}
