#if canImport(Glibc)
import Glibc
#endif
import StepSignConfig

/// Who may connect and who may use `admin.*`, by peer credentials (SPEC §3, `[access]`).
///
/// A peer is an admin if its uid is in `admin_uids` or one of its groups (primary or
/// supplementary) is in `admin_groups`; a client likewise with `client_uids`/`client_groups`.
/// Admins may also connect. Group names are resolved when the configuration is loaded; a
/// name that does not resolve admits nobody.
public struct AccessPolicy: Sendable {
    /// What a peer may do.
    public enum Decision: Sendable, Equatable {
        case refused
        case client
        case admin
    }

    let clientUIDs: Set<UInt32>
    let clientGIDs: Set<UInt32>
    let adminUIDs: Set<UInt32>
    let adminGIDs: Set<UInt32>
    /// Group names that did not resolve, for the log.
    public let unresolvedGroups: [String]

    public init(_ access: StepSignConfiguration.Access) {
        var unresolved: [String] = []
        func resolve(_ names: [String]) -> Set<UInt32> {
            Set(names.compactMap { name in
                if let gid = Self.gid(named: name) { return gid }
                unresolved.append(name)
                return nil
            })
        }
        clientUIDs = Set(access.clientUIDs)
        adminUIDs = Set(access.adminUIDs)
        clientGIDs = resolve(access.clientGroups)
        adminGIDs = resolve(access.adminGroups)
        unresolvedGroups = unresolved
    }

    /// What `peer` may do.
    public func decide(_ peer: Peer) -> Decision {
        if adminUIDs.contains(peer.uid) || Self.inAny(of: adminGIDs, peer) { return .admin }
        if clientUIDs.contains(peer.uid) || Self.inAny(of: clientGIDs, peer) { return .client }
        return .refused
    }

    /// Whether `peer`'s primary group or one of its groups is in `gids` (every request asks:
    /// no set of the peer's groups is made, issue 43).
    private static func inAny(of gids: Set<UInt32>, _ peer: Peer) -> Bool {
        guard !gids.isEmpty else { return false }
        return gids.contains(peer.gid) || peer.groups.contains { gids.contains($0) }
    }

    /// The gid of the group `name` (or `name` itself when it is a number), nil if there is
    /// no such group.
    public static func gid(named name: String) -> UInt32? {
        var group = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getgrnam_r(name, &group, &buffer, buffer.count, &result) == 0, result != nil else {
            return UInt32(name)  // a numeric gid is accepted as well
        }
        return group.gr_gid
    }
}
