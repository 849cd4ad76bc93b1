import Foundation
import StepSignProtocol
import StepSignClient
import Testing

/// A login ends on credential events (SPEC §3 "A login ... ends ... when"): an attacker who
/// logged in once with alice's password keeps nothing once alice changes her password, an
/// admin expires it, alice is blocked, or alice is removed (even when a new alice is added).
/// The next request of the old login that needs it gets error 5. Each runs on one daemon on
/// SQLite and on two daemons sharing one PostgreSQL database, the logins on A and the event
/// on B (SPEC §5.2: what happens through one daemon is so on all of them at once).
@Suite("Logins end on credential events", .blocking)
struct LoginEndTests {
    static var signing: KeyValuePairs<String, any JSONValueConvertible> { [
        "payload": "Pay 1,000,000 EUR to mallory", "reason": "payment", "authLevel": 1, "authenticatorType": 0,
    ] }

    /// What happens to alice on another connection while the attacker holds a login.
    enum Event: String, CaseIterable, CustomTestStringConvertible {
        case passwordChanged = "alice changes her password (mode 2)"
        case expired = "admin.expirePassword"
        case blocked = "three wrong passwords elsewhere block alice"
        case blockedThenUnlocked = "three wrong passwords elsewhere block alice (then an admin unlocks her)"
        case removedAndAddedAgain = "admin.removeUser, then admin.addUser alice with a new password"

        var testDescription: String { rawValue }

        func happen(_ daemon: DaemonHarness) throws {
            switch self {
            case .passwordChanged:
                let alice = try daemon.connect()
                _ = try alice.startUpdate()
                let changed = try alice.updatePassword(current: Passwords.initial, new: Passwords.second, mode: 2)
                try #require(changed.statusCode(of: "onUpdateCredentialResponse") == 100, "\(changed.shape)")
            case .expired:
                try #require(try daemon.connect().call("admin.expirePassword", ["user": "alice"]).code == 0)
            case .blocked, .blockedThenUnlocked:
                let other = try daemon.connect()
                _ = try other.setUser()
                for _ in 0..<3 { _ = try other.setPassword(Passwords.wrong, mode: 0) }
                try #require(try daemon.userRow()?["blocked"]?.boolValue == true)
                if self == .blockedThenUnlocked {
                    let unlocked = try daemon.connect().call("admin.unlockUser", ["user": "alice"])
                    try #require(unlocked.code == 0, "\(unlocked.code) \(unlocked.message)")
                }
            case .removedAndAddedAgain:
                let admin = try daemon.connect()
                try #require(try admin.call("admin.removeUser", ["user": "alice"]).code == 0)
                try daemon.addUser(password: Passwords.second)
            }
        }
    }

    @Test("the attacker's logins get error 5 for enrollDeviceKey and for signing without a user; nothing is enrolled",
          arguments: Event.allCases, Deployment.available)
    func stolenLoginEnds(event: Event, deployment: Deployment) throws {
        let cluster = try deployment.start()
        let daemon = cluster.a
        try daemon.addUser()
        let enrolling = try daemon.connect()
        try enrolling.requireLogin()
        let signing = try daemon.connect()
        try signing.requireLogin()
        let asking = try daemon.connect()
        try asking.requireLogin()

        try event.happen(cluster.b)

        let enrolled = try enrolling.enrollDevice(try TestDevice())
        #expect(enrolled.code == 5, "\(enrolled.message)")
        #expect(enrolled.result?["deviceKeyId"] == nil)
        let signed = try signing.call("authenticateUserAndSignData", Self.signing)
        #expect(signed.code == 5, "\(signed.message)")
        #expect(signed.events.isEmpty)
        let challenges = try asking.call("getAllChallenges")
        #expect(challenges.code == 5, "\(challenges.message)")
        // The login is gone: the next request is an ordinary "not logged in".
        #expect(try enrolling.call("getAllChallenges").code == 11)
        #expect(try enrolling.enrollDevice(try TestDevice()).code == 11)
        #expect(try cluster.b.userRow()?["deviceKeys"]?.arrayValue?.compactMap(\.stringValue) == [])
    }

    @Test("a login that no credential event touched keeps working, and so does a login of another user",
          arguments: Deployment.available)
    func untouchedLoginsStay(deployment: Deployment) throws {
        let cluster = try deployment.start()
        let daemon = cluster.a
        try daemon.addUser()
        try daemon.addUser("bob", password: Passwords.third)
        let bob = try daemon.connect()
        try bob.requireLogin("bob", password: Passwords.third)
        try Event.expired.happen(cluster.b)
        #expect(try bob.call("getAllChallenges").eventNames == ["onCredentialsAvailableForUpdate"])
        #expect(try bob.enrollDevice(try TestDevice()).code == 0)
    }

    @Test("a new login after the event works (with the credentials in force)", arguments: Deployment.available)
    func aFreshLoginWorks(deployment: Deployment) throws {
        let cluster = try deployment.start()
        let daemon = cluster.a
        try daemon.addUser()
        let old = try daemon.connect()
        try old.requireLogin()
        try Event.removedAndAddedAgain.happen(cluster.b)
        #expect(try old.call("getAllChallenges").code == 5)
        try old.requireLogin(password: Passwords.second)
        #expect(try old.enrollDevice(try TestDevice()).code == 0)
    }
}
