import Foundation
import StepSignClient
import StepSignTestSupport
import Testing

/// Sealed credential records (SPEC §5.4), tried against the real daemons as someone who can
/// write the database (the SQLite file; PostgreSQL's superuser) but holds no seal key: a user
/// they write, a password hash they overwrite, a record they roll back to an older sealed copy
/// can neither log in nor sign, and each is reported.
@Suite(.blockingSerialized, .serialized) struct SealedRecordTests {
    /// Runs `sql` on `cluster`'s data behind the daemons' backs.
    private func tamper(_ cluster: Cluster, _ sql: String) throws {
        if let database = cluster.database {
            try database.execute(sql)
        } else {
            let result = try Tools.python("""
                import sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                db.executescript(sys.argv[2])
                db.commit()
                """, cluster.a.stateDirectory + "/stepsign.sqlite", sql)
            try #require(result.status == 0, "\(result.stderr)")
        }
    }

    /// `user` with `password` cannot log in or open a step-up on any daemon: answered as a
    /// blocked user (153 on the prompt, 148 to an answer or a signing).
    private func expectBlocked(_ cluster: Cluster, user: String, password: String,
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        for daemon in cluster.daemons {
            let connection = try daemon.connect()
            let prompt = try connection.setUser(user)
            #expect(prompt.statusCode(of: "getPassword") == 153, "\(prompt.shape)", sourceLocation: sourceLocation)
            let answer = try connection.setPassword(password, mode: 0)
            #expect(answer.code == 148, "\(answer.code) \(answer.message)", sourceLocation: sourceLocation)
            #expect(!answer.eventNames.contains("onUserLoggedIn"), sourceLocation: sourceLocation)
            let signing = try daemon.connect().call("authenticateUserAndSignData", [
                "user": user, "payload": "p", "reason": "r", "authLevel": 1, "authenticatorType": 0,
            ])
            #expect(signing.code == 148, "\(signing.code) \(signing.message)", sourceLocation: sourceLocation)
        }
    }

    /// `admin.auditVerify` of every daemon is not ok and lists `user`'s record with `problem`;
    /// each daemon that met the record logged it at critical.
    private func expectReported(_ cluster: Cluster, user: String, problem: String,
                                sourceLocation: SourceLocation = #_sourceLocation) throws {
        for daemon in cluster.daemons {
            let audit = try #require(try daemon.connect().call("admin.auditVerify").result, sourceLocation: sourceLocation)
            #expect(audit["ok"]?.boolValue == false, "\(audit)", sourceLocation: sourceLocation)
            let listed = audit["unsealedRecords"]?.arrayValue ?? []
            #expect(listed.contains { $0["user"]?.stringValue == user && $0["problem"]?.stringValue == problem },
                    "\(audit)", sourceLocation: sourceLocation)
            let users = try #require(try daemon.connect().call("admin.listUsers").result?["users"]?.arrayValue)
            let row = users.first { $0["user"]?.stringValue == user }
            #expect(row?["sealed"]?.boolValue == false && row?["blocked"]?.boolValue == true, "\(users)",
                    sourceLocation: sourceLocation)
            let critical = daemon.log.split(separator: "\n").filter {
                $0.contains("level=critical") && $0.contains("seal check") && $0.contains(user)
            }
            #expect(!critical.isEmpty, "\(daemon.log)", sourceLocation: sourceLocation)
        }
    }

    @Test("a user written into the database with a password the writer knows cannot log in or sign",
          arguments: Deployment.available)
    func insertedUser(_ deployment: Deployment) throws {
        let cluster = try deployment.start()
        try cluster.a.addUser("eve", password: Passwords.second)
        try tamper(cluster, """
            INSERT INTO users (name, password_hash, password_changed_at, created_at, credential_token)
            SELECT 'mallory', password_hash, password_changed_at, created_at, credential_token FROM users WHERE name = 'eve'
            """)
        try expectBlocked(cluster, user: "mallory", password: Passwords.second)
        try expectReported(cluster, user: "mallory", problem: "missing")
        // The genuine user next to it is untouched.
        try cluster.b.connect().requireLogin("eve", password: Passwords.second)
        // The admin's way out: remove it (and add the user again if it was real).
        #expect(try cluster.a.connect().call("admin.unlockUser", ["user": "mallory"]).code == 148)
        #expect(try cluster.a.connect().call("admin.removeUser", ["user": "mallory"]).code == 0)
        #expect(try cluster.b.connect().call("admin.auditVerify").result?["ok"]?.boolValue == true)
    }

    @Test("a password hash overwritten in the database is never checked: neither password logs in",
          arguments: Deployment.available)
    func overwrittenHash(_ deployment: Deployment) throws {
        let cluster = try deployment.start()
        try cluster.a.addUser()
        try cluster.a.addUser("eve", password: Passwords.second)
        try tamper(cluster, """
            UPDATE users SET password_hash = (SELECT password_hash FROM users WHERE name = 'eve') WHERE name = 'alice'
            """)
        try expectBlocked(cluster, user: "alice", password: Passwords.second)
        try expectBlocked(cluster, user: "alice", password: Passwords.initial)
        try expectReported(cluster, user: "alice", problem: "mismatch")
    }

    @Test("a record rolled back to an older sealed copy is never used: the old password does not log in",
          arguments: Deployment.available)
    func rolledBack(_ deployment: Deployment) throws {
        let cluster = try deployment.start()
        try cluster.a.addUser()
        try tamper(cluster, "CREATE TABLE users_copy AS SELECT * FROM users WHERE name = 'alice'")
        // Alice changes her password (a logged event); the attacker puts her old record back.
        let connection = try cluster.b.connect()
        let opened = try connection.startUpdate()
        try #require(opened.code == 0, "\(opened.message)")
        let changed = try connection.updatePassword(current: Passwords.initial, new: Passwords.third, mode: 2)
        try #require(changed.statusCode(of: "onUpdateCredentialResponse") == 100, "\(changed.shape)")
        let columns = """
            password_hash, password_changed_at, password_expired, must_change_password, blocked, blocked_until, \
            credential_token, event_index, history_digest, device_keys_digest, seal
            """
        try tamper(cluster, "UPDATE users SET (\(columns)) = (SELECT \(columns) FROM users_copy) WHERE name = 'alice'")
        try expectBlocked(cluster, user: "alice", password: Passwords.initial)
        try expectReported(cluster, user: "alice", problem: "rolledBack")
    }
}
