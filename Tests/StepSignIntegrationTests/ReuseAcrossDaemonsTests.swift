import Foundation
import StepSignClient
import StepSignTestSupport
import Testing

/// A step-up reuse window (SPEC §3.4) ends when the user's credentials change anywhere: on one
/// daemon on SQLite through its own events, on two daemons on one PostgreSQL also when the
/// change is made on the other daemon (the stored credential token differs).
@Suite("Step-up reuse across daemons", .blocking)
struct ReuseAcrossDaemonsTests {
    static let config = """
        [stepup]
        reuse_seconds = 600
        reuse_max_uses = 10
        reuse_scope = "peer"
        """

    func sign(_ connection: StepSignConnection, password: String?) throws -> ClientReply {
        var reply = try connection.call("authenticateUserAndSignData", [
            "user": "alice", "payload": "p", "reason": "reuse", "authLevel": 1, "authenticatorType": 0,
        ])
        if let password, reply.event("getPassword") != nil {
            reply = try connection.call("setPassword", ["password": password, "challengeMode": 12])
        }
        return reply
    }

    @Test("a password expired on B ends the window A opened", arguments: Deployment.available)
    func changeOnTheOtherDaemon(deployment: Deployment) throws {
        let cluster = try deployment.start(config: Self.config)
        try cluster.a.addUser()
        let first = try sign(try cluster.a.connect(), password: DaemonHarness.password)
        #expect(first.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        let reused = try sign(try cluster.a.connect(), password: nil)
        #expect(reused.event("onAuthenticateUserAndSignData")?["details"]?["stepUp"]?["reusedFrom"] != nil, "\(reused.object)")

        let expired = try cluster.b.connect().call("admin.expirePassword", ["user": "alice"])
        #expect(expired.code == 0)
        let after = try sign(try cluster.a.connect(), password: nil)
        #expect(after.event("getPassword") != nil, "reused after the password expired: \(after.object)")
    }
}
