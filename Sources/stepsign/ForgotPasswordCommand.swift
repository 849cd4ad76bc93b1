import ArgumentParser
import Foundation

/// `stepsign forgot-password`: asks for an activation code, then sets a new password.
struct ForgotPasswordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forgot-password",
        abstract: "Reset a forgotten password with an activation code sent out of band."
    )

    @OptionGroup var global: GlobalOptions
    @Option(help: "The user ID.") var user: String
    @Option(name: .customLong("code-file"), help: "Read the activation code from a file (first line).") var codeFile: String?
    @Option(name: .customLong("new-password-file"), help: "Read the new password from a file (first line).")
    var newPasswordFile: String?

    func run() throws {
        try runReportingErrors {
            let codes = PasswordReader(file: codeFile, descriptor: nil)
            let flow = LoginFlow(connection: try global.connect(), user: user, passwords: PasswordReader(file: nil, descriptor: nil),
                                 newPasswords: PasswordReader(file: newPasswordFile, descriptor: nil))
            _ = try flow.send("setUser", ["user": user])
            var reply = try flow.send("forgotPassword", ["user": user])
            while let event = reply.event("getActivationCode") {
                let status = event["status"] as? [String: Any] ?? [:]
                if let code = status["code"] as? Int, code != 100 {
                    FileHandle.standardError.write(Data("stepsign: \(status["message"] ?? code)\n".utf8))
                    if code == 153 || codes.isScripted { throw CLIError("the activation code was not accepted") }
                }
                let key = event["verificationKey"] as? String ?? ""
                FileHandle.standardError.write(Data("An activation code was sent. Its message carries the verification key \"\(key)\".\n".utf8))
                let code = try codes.read(prompt: "Activation code: ")
                reply = try flow.send("setActivationCode", ["activationCode": code])
            }
            try flow.answer(reply)
            print("password reset for \(user); logged in")
            _ = try flow.send("logOff")
        }
    }
}
