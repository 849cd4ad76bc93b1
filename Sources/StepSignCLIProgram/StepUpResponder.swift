import Foundation
import StepSignClient
import StepSignProtocol

/// Answers the step-up challenges of a signing (SPEC §3.2, challenge mode 12) until the
/// daemon sends the signing's outcome: the password from the terminal or a script, a device
/// key's signature, or an IDV assertion from a command.
struct StepUpResponder {
    var user: String
    var passwords: PasswordReader
    var deviceKey: String?
    var idvCommand: String?
    /// `--fido2-device`: the security key that answers for a FIDO2 credential file.
    var fido2Device: String? = nil
    /// Called with each challenge event before it is answered (a batch shows its manifest).
    var inspect: (JSONValue) throws -> Void = { _ in }

    /// Answers challenges from `reply` on until an event named `outcome` (or one of `also`)
    /// arrives, and returns it.
    func answer(_ first: ClientReply, on connection: StepSignConnection, until outcome: String,
                or also: Set<String> = []) throws -> JSONValue {
        var reply = first
        while true {
            guard let event = reply.events.last, let name = event["event"]?.stringValue else {
                throw CLIError("the daemon sent no event")
            }
            if name == outcome || also.contains(name) { return event }
            try inspect(event)
            switch name {
            case "getPassword":
                let attemptsLeft = event["attemptsLeft"]?.int ?? 0
                let status = event["status"]
                if let code = status?["code"]?.int, code != 100 {
                    let message = status?["message"]?.stringValue ?? "status \(code)"
                    // A scripted password will not do better: stop, saying why once.
                    if passwords.isScripted { throw CLIError(message) }
                    FileHandle.standardError.write(Data("stepsign: \(message)\n".utf8))
                }
                let password = try passwords.read(prompt: "Password for \(user) (\(attemptsLeft) attempts left): ")
                reply = try connection.call("setPassword", ["password": password, "challengeMode": 12])
                    .requireAccepted("password")
            case "getLDASignature":
                try reportRetry(event)
                guard let deviceKey else {
                    FileHandle.standardError.write(Data("stepsign: no --device-key; answering with the password instead\n".utf8))
                    let password = try passwords.read(prompt: "Password for \(user): ")
                    reply = try connection.call("setPassword", ["password": password, "challengeMode": 12])
                        .requireAccepted("password")
                    continue
                }
                reply = try connection.call("setLDASignature", try DeviceAnswer.answer(event, keyFile: deviceKey, fido2Device: fido2Device))
                    .requireAccepted("device signature")
            case "getIDVBiometric":
                try reportRetry(event)
                guard let idvCommand else { throw CLIError("the daemon asks for an IDV assertion; give --idv-command") }
                let nonce = event["nonce"]?.stringValue ?? ""
                let challenge = event["challenge"]?.stringValue ?? ""
                let assertion = try IDVCommand.run(idvCommand, nonce: nonce, challenge: challenge)
                reply = try connection.call("setIDVBiometricAssertion", ["assertion": assertion])
                    .requireAccepted("IDV assertion")
            default:
                throw CLIError("this client cannot answer \(name) yet")
            }
        }
    }

    /// A retried device or IDV challenge: say why; a scripted answer will not do better.
    private func reportRetry(_ event: JSONValue) throws {
        guard let status = event["status"], let code = status["code"]?.int, code != 100 else { return }
        throw CLIError("not accepted: \(status["message"]?.stringValue ?? "status \(code)")")
    }
}
