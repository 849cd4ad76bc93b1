import Foundation
import StepSignClient
import Testing

/// The user-initiated password update, challenge mode 2 (SPEC §3.2, docs/flows.md "User-initiated update").
@Suite("Password update (mode 2)", .blocking)
struct PasswordUpdateTests {
    private static let logOffChain = ["onUpdateCredentialResponse", "onUserLoggedOff", "getUser"]

    @Test("getAllChallenges after login answers onCredentialsAvailableForUpdate with [\"Password\"]")
    func credentialsAvailable() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        try connection.requireLogin()
        let reply = try connection.call("getAllChallenges")
        #expect(reply.code == 0)
        #expect(reply.eventNames == ["onCredentialsAvailableForUpdate"])
        #expect(reply.string("user", of: "onCredentialsAvailableForUpdate") == "alice")
        #expect(reply.event("onCredentialsAvailableForUpdate")?["options"]?.arrayValue?.compactMap(\.stringValue) == ["Password"])
    }

    @Test("initiateUpdateFlowForCredential(\"Password\") asks in mode 2 with the attempts and the policy")
    func initiateUpdate() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let reply = try daemon.connect().startUpdate()
        #expect(reply.code == 0)
        #expect(reply.eventNames == ["getPassword"])
        #expect(reply.string("user", of: "getPassword") == "alice")
        #expect(reply.int("challengeMode", of: "getPassword") == 2)
        #expect(reply.int("attemptsLeft", of: "getPassword") == 3)
        #expect(reply.statusCode(of: "getPassword") == 100)
        #expect(reply.passwordPolicy == .defaults)
    }

    @Test("initiateUpdateFlowForCredential with another credential type is error 4", arguments: ["Pin", "password", "", "LDA"])
    func unknownCredentialType(type: String) throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        try connection.requireLogin()
        let reply = try connection.call("initiateUpdateFlowForCredential", ["credentialType": type])
        #expect(reply.code == 4)
        #expect(reply.events.isEmpty)
    }

    @Test("a good update answers 100, logs off and asks for a user; then only the new password works")
    func updateSucceeds() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.startUpdate()
        let reply = try connection.updatePassword(current: Passwords.initial, new: Passwords.second, mode: 2)
        #expect(reply.code == 0)
        #expect(reply.eventNames == Self.logOffChain)
        #expect(reply.statusCode(of: "onUpdateCredentialResponse") == 100)
        #expect(reply.string("credType", of: "onUpdateCredentialResponse") == "Password")
        #expect(reply.string("user", of: "onUpdateCredentialResponse") == "alice")
        #expect(reply.string("user", of: "onUserLoggedOff") == "alice")
        #expect(try connection.call("getAllChallenges").code == 11)

        #expect(try daemon.connect().login(password: Passwords.initial).statusCode(of: "getPassword") == 102)
        #expect(try daemon.connect().login(password: Passwords.second).eventNames == ["onUserLoggedIn"])
    }

    @Test("a new password that breaks the policy answers 190 and mode 2 again, still logged in; then a good one succeeds")
    func policyKeepsSession() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.startUpdate()
        let broken = try connection.updatePassword(current: Passwords.initial, new: Passwords.noDigit, mode: 2)
        #expect(broken.code == 0)
        #expect(broken.eventNames == ["onUpdateCredentialResponse", "getPassword"])
        #expect(broken.statusCode(of: "onUpdateCredentialResponse") == 190)
        #expect(broken.statusCode(of: "getPassword") == 190)
        #expect(broken.statusMessage(of: "getPassword")?.contains("minDg") == true)
        #expect(broken.int("challengeMode", of: "getPassword") == 2)
        #expect(broken.int("attemptsLeft", of: "getPassword") == 3)
        #expect(broken.passwordPolicy == .defaults)

        let good = try connection.updatePassword(current: Passwords.initial, new: Passwords.second, mode: 2)
        #expect(good.eventNames == Self.logOffChain)
        #expect(good.statusCode(of: "onUpdateCredentialResponse") == 100)
    }

    @Test("a new password that is an earlier one answers 164 and mode 2 again, still logged in")
    func reuseRefused() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let first = try daemon.connect()
        _ = try first.startUpdate()
        try #require(try first.updatePassword(current: Passwords.initial, new: Passwords.second, mode: 2)
            .statusCode(of: "onUpdateCredentialResponse") == 100)

        let connection = try daemon.connect()
        _ = try connection.startUpdate(password: Passwords.second)
        let reused = try connection.updatePassword(current: Passwords.second, new: Passwords.initial, mode: 2)
        #expect(reused.eventNames == ["onUpdateCredentialResponse", "getPassword"])
        #expect(reused.statusCode(of: "onUpdateCredentialResponse") == 164)
        #expect(reused.statusCode(of: "getPassword") == 164)
        #expect(reused.int("challengeMode", of: "getPassword") == 2)
        #expect(try connection.call("getAllChallenges").eventNames == ["onCredentialsAvailableForUpdate"])
    }

    @Test("wrong current passwords answer 102 with attempts down; the last answers 153, logs off and blocks the user")
    func attemptsExhausted() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.startUpdate()
        for left in [2, 1] {
            let wrong = try connection.updatePassword(current: Passwords.wrong, new: Passwords.second, mode: 2)
            #expect(wrong.eventNames == ["getPassword"])
            #expect(wrong.int("challengeMode", of: "getPassword") == 2)
            #expect(wrong.statusCode(of: "getPassword") == 102)
            #expect(wrong.int("attemptsLeft", of: "getPassword") == left)
        }
        let last = try connection.updatePassword(current: Passwords.wrong, new: Passwords.second, mode: 2)
        #expect(last.eventNames == Self.logOffChain)
        #expect(last.statusCode(of: "onUpdateCredentialResponse") == 153)
        #expect(try daemon.userRow()?["blocked"]?.boolValue == true)
        #expect(try connection.call("getAllChallenges").code == 11)
        let again = try daemon.connect().setUser()
        #expect(again.statusCode(of: "getPassword") == 153)
        #expect(again.int("attemptsLeft", of: "getPassword") == 0)
    }

    @Test("a password an admin expired while the update was open answers 110 and logs off")
    func expiredMeanwhile() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.startUpdate()
        #expect(try daemon.connect().call("admin.expirePassword", ["user": "alice"]).code == 0)
        let reply = try connection.updatePassword(current: Passwords.initial, new: Passwords.second, mode: 2)
        #expect(reply.code == 0)
        #expect(reply.eventNames == Self.logOffChain)
        #expect(reply.statusCode(of: "onUpdateCredentialResponse") == 110)
        #expect(reply.string("credType", of: "onUpdateCredentialResponse") == "Password")
        #expect(try connection.call("getAllChallenges").code == 11)
        // Nothing was changed: the old password still works, and still has to be updated.
        #expect(try daemon.connect().login(password: Passwords.initial).statusCode(of: "getPassword") == 118)
    }

    @Test("the same current and new password is error 167; the challenge stays open")
    func sameCurrentAndNew() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        _ = try connection.startUpdate()
        let same = try connection.updatePassword(current: Passwords.initial, new: Passwords.initial, mode: 2)
        #expect(same.code == 167)
        #expect(same.events.isEmpty)
        let good = try connection.updatePassword(current: Passwords.initial, new: Passwords.second, mode: 2)
        #expect(good.statusCode(of: "onUpdateCredentialResponse") == 100)
    }

    @Test("not logged in: getAllChallenges, initiateUpdateFlowForCredential and updatePassword mode 2 are error 11")
    func notLoggedIn() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        #expect(try connection.call("getAllChallenges").code == 11)
        #expect(try connection.call("initiateUpdateFlowForCredential", ["credentialType": "Password"]).code == 11)
        #expect(try connection.updatePassword(current: Passwords.initial, new: Passwords.second, mode: 2).code == 11)
    }

    @Test("logged in but no update challenge open: updatePassword mode 2 is error 11")
    func updateWithoutInitiate() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        try connection.requireLogin()
        #expect(try connection.updatePassword(current: Passwords.initial, new: Passwords.second, mode: 2).code == 11)
    }
}
