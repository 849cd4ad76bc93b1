import Foundation
import StepSignProtocol
import StepSignClient

/// Drives the login flows of SPEC §3.2 for the CLI: answers each event the daemon sends,
/// asking the person (or reading the script's files) for what it needs.
final class LoginFlow {
    let connection: StepSignConnection
    let user: String
    let passwords: PasswordReader
    let newPasswords: PasswordReader
    /// The password that was accepted (or last given), for `updatePassword`.
    private(set) var currentPassword: String?
    /// The session ID once logged in.
    private(set) var sessionID: String?
    /// The device key (PKCS#8 PEM file) that answers a forgot-password device challenge.
    var deviceKey: String?
    /// Whether forgot password declines the device key and sets a new password instead.
    var declineDevice = false
    /// Whether the login was made with the device key (forgot password, Path A).
    private(set) var usedDeviceKey = false

    init(connection: StepSignConnection, user: String, passwords: PasswordReader, newPasswords: PasswordReader) {
        self.connection = connection
        self.user = user
        self.passwords = passwords
        self.newPasswords = newPasswords
    }

    /// Connects and logs `user` in with the passwords `options` say where to find.
    static func loggedIn(_ global: GlobalOptions, user: String, options: PasswordOptions) throws -> LoginFlow {
        let flow = LoginFlow(connection: try global.connect(), user: user, passwords: options.current, newPasswords: options.new)
        try flow.logIn()
        return flow
    }

    /// Sends `op` and fails unless it was accepted.
    func send(_ op: String, _ parameters: KeyValuePairs<String, any JSONValueConvertible> = [:]) throws -> ClientReply {
        try connection.call(op, parameters).requireAccepted(op)
    }

    /// `setUser`, then answers mode 0 (and mode 4 if the password expired) until logged in.
    func logIn() throws {
        try answer(send("setUser", ["user": user]))
    }

    /// Answers the events of `reply` until the flow ends; returns at `onUserLoggedIn`.
    func answer(_ reply: ClientReply) throws {
        var reply = reply
        while true {
            guard let event = reply.events.last, let name = event["event"]?.stringValue else {
                throw CLIError("the daemon sent no event")
            }
            switch name {
            case "onUserLoggedIn":
                sessionID = (event["session"])?["id"]?.stringValue
                return
            case "getUser":
                throw CLIError(Self.statusMessage(of: reply.events.dropLast().last) ?? "the daemon ended the login")
            case "getPassword":
                let mode = event["challengeMode"]?.int ?? -1
                try reportStatus(event)
                switch mode {
                case 0:
                    let password = try passwords.read(prompt: "Password for \(user) (\(event["attemptsLeft"]?.int.map(String.init) ?? "?") attempts left): ")
                    currentPassword = password
                    reply = try send("setPassword", ["password": password, "challengeMode": 0])
                case 4:
                    let current = try currentPassword ?? passwords.read(prompt: "Current password: ")
                    let new = try readNewPassword(event)
                    reply = try send("updatePassword", ["currentPassword": current, "newPassword": new, "challengeMode": 4])
                    currentPassword = new
                case 1:
                    let new = try readNewPassword(event)
                    reply = try send("setPassword", ["password": new, "challengeMode": 1])
                    currentPassword = new
                default:
                    throw CLIError("this client cannot answer a mode-\(mode) password challenge here")
                }
            case "getUserConsentForLDA":
                reply = try answerConsent()
            case "getLDASignature":
                try reportStatus(event)
                guard let deviceKey else { throw CLIError("the daemon asks for a device signature; give --device-key") }
                // A security key does not log in (Path A takes plain device keys only).
                let answer = try DeviceAnswer.sign(event, pem: try SecretFile.read(path: deviceKey, what: "device key"),
                                                   keyFile: deviceKey)
                reply = try send("setLDASignature", ["deviceKeyId": answer.kid, "signature": answer.signature])
                usedDeviceKey = true
            default:
                throw CLIError("this client cannot answer \(name) here")
            }
        }
    }

    /// Forgot password, after a right code for a user with a device key: log in with the key
    /// (consent), or decline and set a new password; on a terminal, asks which when not told.
    private func answerConsent() throws -> ClientReply {
        if deviceKey == nil, !declineDevice {
            let answer = PasswordReader.askOnTerminal(
                "\(user) has a device key. Log in with it instead of setting a new password? Its private key file (empty: set a new password): ")
            guard let answer else {
                throw CLIError("\(user) has a device key: give --device-key FILE, or --decline-device to set a new password", exitCode: 2)
            }
            let path = answer.trimmingCharacters(in: .whitespaces)
            if !path.isEmpty { deviceKey = path }
        }
        return try send("setUserConsentForLDA", ["consent": deviceKey != nil])
    }

    /// Shows the policy in words and reads a new password (twice on a terminal).
    func readNewPassword(_ event: JSONValue) throws -> String {
        if let info = event["info"], let json = info["RELID_PASSWORD_POLICY"]?.stringValue,
           let policy = PasswordPolicy(relidPolicyJSON: json) {
            FileHandle.standardError.write(Data("\(policy.description)\n".utf8))
        }
        return try newPasswords.readConfirmed(prompt: "New password: ", again: "New password again: ")
    }

    /// Prints a challenge's status when it is not success; a scripted answer that was refused
    /// stops here, so a script does not burn its remaining attempts.
    func reportStatus(_ event: JSONValue) throws {
        guard let status = event["status"], let code = status["code"]?.int, code != 100 else { return }
        let message = status["message"]?.stringValue ?? "status \(code)"
        // Said once: as the error that stops here, or as a note before asking again.
        if code != 118 {  // expired: informational, the new password is asked next
            let mode = event["challengeMode"]?.int
            let reader = event["event"]?.stringValue == "getLDASignature" ? nil : (mode == 0 ? passwords : newPasswords)
            let scripted = reader?.isScripted ?? true || (code == 102 && passwords.isScripted)
            if scripted || code == 153 { throw CLIError(message) }
        }
        FileHandle.standardError.write(Data("stepsign: \(message)\n".utf8))
    }

    static func statusMessage(of event: JSONValue?) -> String? {
        (event?["status"])?["message"]?.stringValue
    }
}
