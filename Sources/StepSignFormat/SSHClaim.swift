import StepSignProtocol

/// The `ssh` claim of a signature made through the SSH agent (SPEC §3.5): the fields of the
/// SSHSIG data the agent signed, so the log shows what each commit or file signature was.
public struct SSHClaim: Codable, Sendable, Equatable {
    /// The SSHSIG namespace (`git`, `file`, …); `ssh-userauth` for an SSH login's session data.
    public var namespace: String
    /// `sha256` or `sha512`: how the message was hashed.
    public var hashAlgorithm: String
    /// The message's hash, lowercase hex.
    public var hash: String

    public init(namespace: String, hashAlgorithm: String, hash: String) {
        self.namespace = namespace
        self.hashAlgorithm = hashAlgorithm
        self.hash = hash
    }

    func write<Output>(into writer: inout JSONWriter<Output>) {
        writer.key("ssh")
        writer.beginObject()
        writer.member("namespace", namespace)
        writer.member("hashAlgorithm", hashAlgorithm)
        writer.member("hash", hash)
        writer.endObject()
    }
}
