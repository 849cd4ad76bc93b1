/// The local process that asked for a signature, from `SO_PEERCRED` and `/proc/PID/comm`.
public struct LedgerPeer: Sendable, Equatable {
    /// The peer's user ID.
    public var uid: UInt32
    /// The peer's process ID.
    public var pid: Int32
    /// The peer's process name.
    public var comm: String

    public init(uid: UInt32, pid: Int32, comm: String) {
        self.uid = uid
        self.pid = pid
        self.comm = comm
    }
}
