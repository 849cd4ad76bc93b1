import ArgumentParser
import Foundation

/// `stepsign forgot-password`: asks for an activation code, then logs in with a device key
/// (Path A) or sets a new password (Path B).
struct ForgotPasswordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forgot-password",
        abstract: "Reset a forgotten password with an activation code sent out of band.",
        discussion: """
            After a right code, a user with a device key may log in with it (--device-key) and \
            keep the password, or decline (--decline-device) and set a new one. On a terminal, \
            without either option, the command asks. Everything a script must answer is checked \
            before a code is requested, so a code is never spent on a question nobody can answer.
            """
    )

    @OptionGroup var global: GlobalOptions
    @Option(help: "The user ID.") var user: String
    @Option(name: .customLong("code-file"), help: ArgumentHelp("Read the activation code from a file (first line; - is stdin).", valueName: "file"))
    var codeFile: String?
    @Option(name: .customLong("code-fd"), help: ArgumentHelp("Read the activation code from a file descriptor (one line).", valueName: "fd"))
    var codeFD: Int32?
    @Option(name: .customLong("device-key"), help: ArgumentHelp("If the user has a device key, log in with this PKCS#8 PEM private key instead of setting a new password.", valueName: "file"))
    var deviceKey: String?
    @Flag(name: .customLong("decline-device"), help: "If the user has a device key, do not use it: set a new password.")
    var declineDevice = false
    @OptionGroup var newPassword: NewPasswordOptions

    func validate() throws {
        try SecretSources.validate(["--code-file": codeFile], ["--code-fd": codeFD])
        if deviceKey != nil, declineDevice {
            throw ValidationError("--device-key and --decline-device cannot be used together")
        }
    }

    func run() throws {
        try runReportingErrors {
            let codes = PasswordReader(file: codeFile, descriptor: codeFD, what: "activation code", options: "--code-file or --code-fd")
            let newPasswords = newPassword.reader
            // Ask for a code only when every answer can be had: a terminal, or the options.
            guard codes.canRead else {
                throw CLIError("no terminal to ask for the activation code on; use --code-file or --code-fd", exitCode: 2)
            }
            guard deviceKey != nil || newPasswords.canRead else {
                throw CLIError("no terminal to ask for the new password on; use --new-password-file or --new-password-fd (or --device-key FILE if \(user) has a device key)", exitCode: 2)
            }
            if codes.readsStdin && newPasswords.readsStdin {
                FileHandle.standardError.write(Data("stepsign: reading the activation code, then the new password, one line each from stdin\n".utf8))
            }
            let flow = LoginFlow(connection: try global.connect(), user: user, passwords: PasswordReader(),
                                 newPasswords: newPasswords)
            flow.deviceKey = deviceKey
            // Whoever scripts the new password has chosen Path B.
            flow.declineDevice = declineDevice || (deviceKey == nil && newPasswords.isScripted)
            _ = try flow.send("setUser", ["user": user])
            var reply = try flow.send("forgotPassword", ["user": user])
            var asked = false
            while let event = reply.event("getActivationCode") {
                let status = event["status"] ?? [:]
                let key = event["verificationKey"]?.stringValue ?? ""
                if let code = status["code"]?.int, code != 100 {
                    let message = status["message"]?.stringValue ?? "status \(code)"
                    if code == 153 || codes.isScripted { throw CLIError("the activation code was not accepted: \(message)") }
                    FileHandle.standardError.write(Data("stepsign: \(message); type the code again (the message with the verification key \"\(key)\").\n".utf8))
                } else if !asked {
                    FileHandle.standardError.write(Data("An activation code was sent. Its message carries the verification key \"\(key)\".\n".utf8))
                }
                asked = true
                let code = try codes.read(prompt: "Activation code: ")
                reply = try flow.send("setActivationCode", ["activationCode": code])
            }
            try flow.answer(reply)
            if flow.usedDeviceKey {
                print("\(user) logged in with the device key; the password is unchanged")
            } else {
                print("password reset for \(user); logged in")
            }
            _ = try flow.send("logOff")
        }
    }
}
