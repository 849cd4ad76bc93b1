import StepSignProtocol

/// The `peer` claim (SPEC §2): the local process that asked for the signature, as the kernel
/// reported it (`SO_PEERCRED`) and its name from `/proc/PID/comm`.
public struct SignaturePeer: Codable, Sendable, Equatable {
    /// The peer's user ID.
    public var uid: UInt32
    /// The peer's process ID.
    public var pid: Int32
    /// The peer's process name (its own choice: `prctl(PR_SET_NAME)` changes it).
    public var comm: String

    /// A peer with the given values.
    public init(uid: UInt32, pid: Int32, comm: String) {
        self.uid = uid
        self.pid = pid
        self.comm = comm
    }

    /// Writes the `peer` member, `{uid, pid, comm}` in that order, as every signed claim has it.
    func write<Output>(into writer: inout JSONWriter<Output>) {
        writer.key("peer")
        writer.beginObject()
        writer.member("uid", uid)
        writer.member("pid", pid)
        writer.member("comm", comm)
        writer.endObject()
    }
}
