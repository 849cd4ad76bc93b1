@testable import StepSignEngine
import StepSignConfig
import Testing

@Suite("Who may connect and use admin.* (access lists)")
struct AccessPolicyTests {
    private func policy(clientUIDs: [UInt32] = [], clientGroups: [String] = [], adminUIDs: [UInt32] = [],
                        adminGroups: [String] = []) -> AccessPolicy {
        AccessPolicy(StepSignConfiguration.Access(clientUIDs: clientUIDs, clientGroups: clientGroups,
                                                  adminUIDs: adminUIDs, adminGroups: adminGroups))
    }

    private func peer(uid: UInt32, gid: UInt32, groups: [UInt32] = []) -> Peer {
        Peer(uid: uid, gid: gid, pid: 1, comm: "test", groups: groups)
    }

    @Test("a listed uid, a primary group or a supplementary group admits; admin wins over client; nothing listed refuses")
    func decisions() {
        // Numeric group names resolve to themselves.
        let access = policy(clientUIDs: [1000], clientGroups: ["2000"], adminUIDs: [0], adminGroups: ["3000"])
        #expect(access.decide(peer(uid: 1000, gid: 1000)) == .client)
        #expect(access.decide(peer(uid: 1001, gid: 2000)) == .client)
        #expect(access.decide(peer(uid: 1001, gid: 1001, groups: [5, 2000])) == .client)
        #expect(access.decide(peer(uid: 0, gid: 0)) == .admin)
        #expect(access.decide(peer(uid: 1000, gid: 3000)) == .admin)
        #expect(access.decide(peer(uid: 1000, gid: 1000, groups: [3000])) == .admin)
        #expect(access.decide(peer(uid: 1001, gid: 1001, groups: [5, 6])) == .refused)
        #expect(access.decide(peer(uid: 1001, gid: 1001)) == .refused)
    }

    @Test("with no groups listed only uids count, whatever groups the peer has")
    func uidsOnly() {
        let access = policy(clientUIDs: [1000])
        #expect(access.decide(peer(uid: 1000, gid: 7, groups: [8])) == .client)
        #expect(access.decide(peer(uid: 1001, gid: 1000, groups: [1000])) == .refused)
    }
}
