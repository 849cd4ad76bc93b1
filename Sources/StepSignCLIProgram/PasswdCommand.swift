import ArgumentParser
import Foundation
import StepSignClient

/// `stepsign passwd`: the user-initiated password update (challenge mode 2).
struct PasswdCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "passwd", abstract: "Change a user's password.")

    @OptionGroup var global: GlobalOptions
    @Option(help: "The user ID.") var user: String
    @OptionGroup var passwords: PasswordOptions

    func run() throws {
        try runReportingErrors {
            let flow = try LoginFlow.loggedIn(global, user: user, options: passwords)
            let options = try flow.send("getAllChallenges").event("onCredentialsAvailableForUpdate")?["options"]?.arrayValue?.compactMap(\.stringValue) ?? []
            guard options.contains("Password") else { throw CLIError("the daemon offers no password update") }
            var reply = try flow.send("initiateUpdateFlowForCredential", ["credentialType": "Password"])
            while true {
                if let response = reply.event("onUpdateCredentialResponse"),
                   let status = response["status"], let code = status["code"]?.int {
                    guard code == 100 else {
                        let message = status["message"]?.stringValue ?? "status \(code)"
                        if code == 110 || code == 153 || passwords.new.isScripted { throw CLIError("password not changed: \(message)") }
                        FileHandle.standardError.write(Data("stepsign: \(message)\n".utf8))
                        reply = try askAgain(reply, flow: flow)
                        continue
                    }
                    print("password changed for \(user); log in again with the new password")
                    return
                }
                reply = try askAgain(reply, flow: flow)
            }
        }
    }

    /// Answers the mode-2 `getPassword` in `reply`.
    private func askAgain(_ reply: ClientReply, flow: LoginFlow) throws -> ClientReply {
        guard let event = reply.event("getPassword"), event["challengeMode"]?.int == 2 else {
            throw CLIError("unexpected reply: \(reply.eventNames.joined(separator: ", "))")
        }
        if let status = event["status"], status["code"]?.int == 102 {
            let message = status["message"]?.stringValue ?? "the current password was not accepted"
            if passwords.current.isScripted { throw CLIError(message) }
            FileHandle.standardError.write(Data("stepsign: \(message)\n".utf8))
        }
        let current = try passwords.current.isScripted && flow.currentPassword != nil
            ? flow.currentPassword! : passwords.current.read(prompt: "Current password: ")
        let new = try flow.readNewPassword(event)
        return try flow.connection.call("updatePassword", ["currentPassword": current, "newPassword": new, "challengeMode": 2])
            .requireAccepted("updatePassword")
    }
}
