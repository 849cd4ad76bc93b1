import Foundation
import StepSignProtocol
import StepSignTestSupport
import StepSignClient
import StepSignEngine
@testable import StepSignStorage
import Testing

/// Passwords for the login and credential flows (SPEC §3.2, docs/flows.md).
///
/// Every `valid` one meets the default policy of SPEC §6 for the user "alice"; every other
/// one breaks exactly the rule its name says and nothing else.
enum Passwords {
    static let initial = DaemonHarness.password  // "Tr1cky-Pelican-42"
    static let second = "Brave-Otter-79"
    static let third = "Mellow!Fjord-60"
    static let fourth = "Stormy+Kite-93"
    static let wrong = "Wrong-Guess-71"

    /// One password per policy field, each breaking only that field (default policy, user alice).
    static let tooShort = "Bq7!zm"                                            // minL
    static let tooLong = String(repeating: "Tr1cky-Pelican-42", count: 4)      // maxL (68)
    static let noDigit = "Brave-Otter-Qz"                                      // minDg
    static let noUppercase = "brave-otter-79"                                  // minUc
    static let noLowercase = "BRAVE-OTTER-79"                                  // minLc
    static let noSpecial = "BraveOtter79"                                      // minSc
    static let withHash = "Quiet#Heron-58"                                     // charsNotAllowed = "#"
    static let repeated = "Braaaave-Otter-79"                                  // Repetition (4 > 3)
    static let withUserID = "Alice-Otter-79"                                   // UserIDcheck
    static let withSequence = "Brave-Otter-789"                                // SeqCheck
    static let common = "P@ssw0rd"                                             // BlackListedCommonPassword
}

/// The policy fields of `RELID_PASSWORD_POLICY`, typed, to compare what the daemon sends
/// with what was configured. Booleans may travel as JSON booleans or as "true"/"false".
struct PolicyFields: Equatable, CustomStringConvertible {
    var minL = 8, maxL = 64, minDg = 1, minUc = 1, minLc = 1, minSc = 1
    var charsNotAllowed = ""
    var repetition = 3
    var userIDCheck = true, seqCheck = true, blackListedCommonPassword = true
    var msg = ""

    /// SPEC §6 defaults.
    static let defaults = PolicyFields()

    init() {}

    /// Parses the `RELID_PASSWORD_POLICY` JSON string; nil if it is not a JSON object with every field.
    init?(json: String) {
        guard let object = try? JSONParser.parse(Array(json.utf8)) else { return nil }
        func int(_ key: String) -> Int? { object[key]?.int }
        func bool(_ key: String) -> Bool? {
            if let text = object[key]?.stringValue { return text == "true" ? true : text == "false" ? false : nil }
            return object[key]?.boolValue
        }
        guard let minL = int("minL"), let maxL = int("maxL"), let minDg = int("minDg"), let minUc = int("minUc"),
              let minLc = int("minLc"), let minSc = int("minSc"), let repetition = int("Repetition"),
              let userIDCheck = bool("UserIDcheck"), let seqCheck = bool("SeqCheck"),
              let blackListed = bool("BlackListedCommonPassword")
        else { return nil }
        self.minL = minL; self.maxL = maxL; self.minDg = minDg; self.minUc = minUc; self.minLc = minLc
        self.minSc = minSc; self.repetition = repetition; self.userIDCheck = userIDCheck
        self.seqCheck = seqCheck; self.blackListedCommonPassword = blackListed
        self.charsNotAllowed = object["charsNotAllowed"]?.stringValue ?? ""
        self.msg = object["msg"]?.stringValue ?? ""
    }

    var description: String {
        "minL \(minL) maxL \(maxL) minDg \(minDg) minUc \(minUc) minLc \(minLc) minSc \(minSc) "
            + "charsNotAllowed \(charsNotAllowed.debugDescription) Repetition \(repetition) UserIDcheck \(userIDCheck) "
            + "SeqCheck \(seqCheck) BlackListedCommonPassword \(blackListedCommonPassword) msg \(msg.debugDescription)"
    }
}

extension ClientReply {
    /// `status.message` of the first event named `name`.
    func statusMessage(of name: String) -> String? {
        (event(name)?["status"])?["message"]?.stringValue
    }

    /// An integer field (`challengeMode`, `attemptsLeft`) of the first event named `name`.
    func int(_ field: String, of name: String) -> Int? {
        event(name)?[field]?.int
    }

    /// A string field (`user`, `verificationKey`, `credType`) of the first event named `name`.
    func string(_ field: String, of name: String) -> String? {
        event(name)?[field]?.stringValue
    }

    /// `info[key]` of the first event named `name`.
    func info(_ key: String, of name: String) -> String? {
        event(name)?["info"]?[key]?.stringValue
    }

    /// The `RELID_PASSWORD_POLICY` of the first `getPassword`, parsed.
    var passwordPolicy: PolicyFields? {
        info("RELID_PASSWORD_POLICY", of: "getPassword").flatMap(PolicyFields.init(json:))
    }

    /// `session.id` of `onUserLoggedIn`.
    var sessionID: String? {
        (event("onUserLoggedIn")?["session"])?["id"]?.stringValue
    }

    /// What an observer can compare between two replies: code, then per event its name,
    /// mode, attempts, status code and the forgot-password flag. No user name, no messages.
    var shape: [String] {
        ["code \(code)"] + events.map { event in
            let status = (event["status"])?["code"]?.int
            let forgot = (event["info"])?["ENABLE_FORGOT_PASSWORD"]?.stringValue
            return "\(event["event"]?.stringValue ?? "?") mode \(event["challengeMode"]?.int ?? -1) "
                + "attempts \(event["attemptsLeft"]?.int ?? -1) status \(status ?? -1) forgot \(forgot ?? "-")"
        }
    }
}

extension StepSignConnection {
    /// `setUser`: opens a mode-0 challenge.
    func setUser(_ user: String = DaemonHarness.user) throws -> ClientReply {
        try call("setUser", ["user": user])
    }

    /// `setPassword` in `mode`.
    func setPassword(_ password: String, mode: Int) throws -> ClientReply {
        try call("setPassword", ["password": password, "challengeMode": mode])
    }

    /// `updatePassword` in `mode` (2 or 4).
    func updatePassword(current: String, new: String, mode: Int) throws -> ClientReply {
        try call("updatePassword", ["currentPassword": current, "newPassword": new, "challengeMode": mode])
    }

    /// `setUser` then `setPassword` mode 0; returns the `setPassword` reply.
    func login(_ user: String = DaemonHarness.user, password: String = Passwords.initial) throws -> ClientReply {
        let challenge = try setUser(user)
        guard challenge.code == 0 else { return challenge }
        return try setPassword(password, mode: 0)
    }

    /// Logs in and requires `onUserLoggedIn`.
    func requireLogin(_ user: String = DaemonHarness.user, password: String = Passwords.initial,
                      sourceLocation: SourceLocation = #_sourceLocation) throws {
        let reply = try login(user, password: password)
        try #require(reply.eventNames == ["onUserLoggedIn"], "login failed: \(reply.code) \(reply.message) \(reply.shape)",
                     sourceLocation: sourceLocation)
    }

    /// Logs in and opens the mode-2 update challenge.
    func startUpdate(password: String = Passwords.initial, sourceLocation: SourceLocation = #_sourceLocation) throws -> ClientReply {
        try requireLogin(password: password, sourceLocation: sourceLocation)
        return try call("initiateUpdateFlowForCredential", ["credentialType": "Password"])
    }

    /// `admin.expirePassword` (on its own connection), then a correct login: the mode-4 prompt.
    func loginExpired(_ daemon: DaemonHarness, password: String = Passwords.initial) throws -> ClientReply {
        let expired = try daemon.connect().call("admin.expirePassword", ["user": DaemonHarness.user])
        guard expired.code == 0 else { return expired }
        return try login(password: password)
    }

    /// `setUser`, `forgotPassword`, then the code from the outbox: the mode-1 prompt.
    func recoverWithActivationCode(_ daemon: DaemonHarness, user: String = DaemonHarness.user,
                                   sourceLocation: SourceLocation = #_sourceLocation) throws -> ClientReply {
        _ = try setUser(user)
        let sent = try call("forgotPassword", ["user": user])
        try #require(sent.eventNames == ["getActivationCode"], "forgotPassword: \(sent.code) \(sent.message)",
                     sourceLocation: sourceLocation)
        let code = try #require(daemon.lastActivationCode(user: user), sourceLocation: sourceLocation)
        return try call("setActivationCode", ["activationCode": code])
    }
}

extension DaemonHarness {
    /// The notifier's deliveries for `user` (SPEC §6: one JSON object per line in state_dir/outbox/USER).
    func outbox(user: String = DaemonHarness.user) -> [JSONValue] {
        guard let text = try? String(contentsOfFile: outboxPath(user: user), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            try? JSONParser.parse(Array($0.utf8))
        }
    }

    func outboxPath(user: String = DaemonHarness.user) -> String {
        stateDirectory + "/outbox/" + user
    }

    /// The activation code of the last delivery to `user`. Codes are delivered after the
    /// reply (SPEC §5.1), so this waits up to 10 s for a delivery newer than the last one it
    /// returned, then returns the last there is.
    func lastActivationCode(user: String = DaemonHarness.user) -> String? {
        let seen = outboxSeen.withLock { $0[user, default: 0] }
        let deadline = Date().addingTimeInterval(10)
        var lines = outbox(user: user)
        while lines.count <= seen, Date() < deadline {
            usleep(10_000)
            lines = outbox(user: user)
        }
        outboxSeen.withLock { $0[user] = lines.count }
        return lines.last?["activationCode"]?.stringValue
    }

    /// `admin.listUsers` row of `user`.
    func userRow(_ user: String = DaemonHarness.user) throws -> JSONValue? {
        let users = try connect().call("admin.listUsers").result?["users"]?.arrayValue ?? []
        return users.first { $0["user"]?.stringValue == user }
    }

    /// Ages `user`'s password by `days` without a clock: stops the daemon, moves the stored
    /// `password_changed_at` back, and starts it again (what time passing does to the row).
    func agePassword(user: String = DaemonHarness.user, days: Double) throws {
        stop()
        try Tools.checkedPython("""
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1])
            n = c.execute("UPDATE users SET password_changed_at = password_changed_at - ? WHERE name = ?",
                          (float(sys.argv[3]) * 86400, sys.argv[2])).rowcount
            c.commit()
            sys.exit(0 if n == 1 else 1)
            """, stateDirectory + "/stepsign.sqlite", user, String(days))
        // Sealed again with the daemon's key (SPEC §5.4), as time passing would leave it sealed.
        try SQLiteStore.open(stateDirectory: stateDirectory,
                             seal: try SealKey.stateKey(stateDirectory: stateDirectory).seal, sealUnsealed: false)
            .resealForTesting(user)
        try start()
    }
}
