import Foundation
import StepSignClient
import StepSignCrypto
import StepSignProtocol
import StepSignTestSupport
import Synchronization
import Testing

/// Approval by several people (SPEC §3.4) across real daemons: a request made on A is
/// approved on B, survives a restart of both between its two approvals, and its signature
/// (made by whichever daemon counted the last approval) is fetched on A with `getApproval`,
/// the claims naming both approvers. On one daemon on SQLite, and on two on one PostgreSQL.
@Suite("Approvals across daemons and restarts", .blocking)
struct ApprovalDeploymentTests {
    static let config = """
        [[approval]]
        reason_prefix = "payment:"
        approvers = ["bob", "carol"]
        required = 2
        """
    static let password = DaemonHarness.password

    struct Failure: Error, CustomStringConvertible { var description: String }

    func login(_ user: String, on daemon: DaemonHarness) throws -> StepSignConnection {
        let connection = try daemon.connect()
        _ = try connection.call("setUser", ["user": user])
        let reply = try connection.call("setPassword", ["password": Self.password, "challengeMode": 0])
        guard reply.event("onUserLoggedIn") != nil else { throw Failure(description: "\(user) not logged in: \(reply.object)") }
        return connection
    }

    func approve(_ id: String, as user: String, on daemon: DaemonHarness) throws -> JSONValue? {
        let connection = try login(user, on: daemon)
        let challenge = try connection.call("approveRequest", ["approvalID": id])
        guard challenge.code == 0 else { throw Failure(description: "approveRequest: \(challenge.object)") }
        return try connection.call("setPassword", ["password": Self.password, "challengeMode": 12]).event("onApprovalResponse")
    }

    @Test("requested on A, approved on B around a restart of both, signed once, fetched on A", arguments: Deployment.available)
    func approvedAcrossDaemons(deployment: Deployment) throws {
        let cluster = try deployment.start(config: Self.config)
        for user in ["alice", "bob", "carol"] { try cluster.a.addUser(user) }

        let requester = try cluster.a.connect()
        _ = try requester.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "pay 5000 EUR to ACME", "reason": "payment: PO-7", "authLevel": 1, "authenticatorType": 0,
        ])
        let pending = try requester.call("setPassword", ["password": Self.password, "challengeMode": 12]).event("onApprovalPending")
        let id = try #require(pending?["approvalID"]?.stringValue, "not pending")

        let listed = try login("bob", on: cluster.b).call("listApprovals").result?["approvals"]?.arrayValue ?? []
        #expect(listed.map { $0["approvalID"]?.stringValue } == [id])
        #expect(try approve(id, as: "bob", on: cluster.b)?["state"]?.stringValue == "pending")

        try cluster.restart()
        let second = try approve(id, as: "carol", on: cluster.b)
        #expect(second?["state"]?.stringValue == "signed" && second?["approvals"]?.int == 2)

        let fetched = try cluster.a.connect().call("getApproval", ["approvalID": id])
        #expect(fetched.result?["state"]?.stringValue == "signed")
        let details = try #require(fetched.event("onAuthenticateUserAndSignData")?["details"])
        let jws = try #require(details["payloadSignature"]?.stringValue)
        let claims = try JSONParser.parse(Base64URL.decode(String(jws.split(separator: ".")[1])) ?? [])
        #expect(claims["sub"]?.stringValue == "alice" && claims["payload"]?.stringValue == "pay 5000 EUR to ACME")
        #expect(claims["approvals"]?.arrayValue?.compactMap { $0["user"]?.stringValue } == ["bob", "carol"])
        // One signature in the ledger, with the approvals' steps as events around it.
        let audit = try cluster.a.connect().call("admin.auditVerify")
        #expect(audit.result?["ok"]?.boolValue == true, "\(audit.object)")
        let status = try cluster.a.connect().call("status").result
        #expect(status?["signatures"]?.int == 1)
    }

    @Test("a request that times out on one daemon is expired for all, once", arguments: Deployment.available)
    func expiresOnce(deployment: Deployment) throws {
        let cluster = try deployment.start(config: Self.config + "\ntimeout_seconds = 10")
        for user in ["alice", "bob", "carol"] { try cluster.a.addUser(user) }
        let requester = try cluster.a.connect()
        _ = try requester.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "pay 1 EUR", "reason": "payment: small", "authLevel": 1, "authenticatorType": 0,
        ])
        let id = try #require(try requester.call("setPassword", ["password": Self.password, "challengeMode": 12])
            .event("onApprovalPending")?["approvalID"]?.stringValue)
        // Waits on B for the outcome: the sweep of A or B (every 5 s) ends it after 10 s.
        let outcome = try cluster.b.connect().call("getApproval", ["approvalID": id, "waitSeconds": 30], timeout: 60)
        #expect(outcome.result?["state"]?.stringValue == "expired", "\(outcome.object)")
        #expect(outcome.statusCode(of: "onAuthenticateUserAndSignData") == 122)
        // The sweep ends the request in the store, then records its event: `getApproval` may
        // see the end first, so the event is waited for.
        func expiries() throws -> Int {
            let export = try cluster.a.connect().call("admin.exportLedger", ["afterSeq": 0, "limit": 10_000])
            return (export.result?["entries"]?.arrayValue ?? []).filter { entry in
                guard let jws = entry["payloadSignature"]?.stringValue, let part = jws.split(separator: ".").dropFirst().first,
                      let bytes = Base64URL.decode(String(part)), let claims = try? JSONParser.parse(bytes) else { return false }
                return claims["event"]?.stringValue == "approvalExpired"
            }.count
        }
        let deadline = Date().addingTimeInterval(20)
        var count = try expiries()
        while count == 0, Date() < deadline {
            usleep(100_000)
            count = try expiries()
        }
        #expect(count == 1)
    }

    @Test("SIGTERM while a getApproval waits 300 s: it answers with the pending request and the daemon exits 0 at once")
    func shutdownEndsAWait() throws {
        let daemon = try DaemonHarness(config: Self.config)
        for user in ["alice", "bob", "carol"] { try daemon.addUser(user) }
        let requester = try daemon.connect()
        _ = try requester.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "pay 2 EUR", "reason": "payment: wait", "authLevel": 1, "authenticatorType": 0,
        ])
        let id = try #require(try requester.call("setPassword", ["password": Self.password, "challengeMode": 12])
            .event("onApprovalPending")?["approvalID"]?.stringValue)
        let socketPath = daemon.socketPath
        let answer = Mutex<ClientReply?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let waiter = try? StepSignConnection(socketPath: socketPath)
            let reply = try? waiter?.call("getApproval", ["approvalID": id, "waitSeconds": 300], timeout: 330)
            answer.withLock { $0 = reply }
            done.signal()
        }
        Thread.sleep(forTimeInterval: 0.5)  // the request is read and waiting
        let start = Date()
        #expect(daemon.stop(signal: SIGTERM) == 0)
        let took = Date().timeIntervalSince(start)
        #expect(took < 20, "shutdown waited \(took) s for the getApproval")
        print("shutdown with a waiting getApproval took \(took) s")
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(answer.withLock { $0 }?.result?["state"]?.stringValue == "pending")
    }
}
