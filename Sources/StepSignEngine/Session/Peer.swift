import StepSignProtocol

/// The process on the other end of a connection, from `SO_PEERCRED` and `/proc`.
public struct Peer: Sendable, Equatable {
    public var uid: UInt32
    public var gid: UInt32
    public var pid: Int32
    /// `/proc/PID/comm`, or "" if it could not be read.
    public var comm: String
    /// The peer's supplementary groups when it connected (`SO_PEERGROUPS`), primary group not included.
    public var groups: [UInt32]

    public init(uid: UInt32, gid: UInt32, pid: Int32, comm: String, groups: [UInt32]) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
        self.comm = comm
        self.groups = groups
    }

    var json: JSONValue { ["uid": .int(Int64(uid)), "pid": .int(Int64(pid)), "comm": .string(comm)] }
}
