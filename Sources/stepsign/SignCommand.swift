import ArgumentParser
import StepSignProtocol
import Foundation
import StepSignClient
import StepSignFormat

/// `stepsign sign`: asks for a signature and answers the step-up challenges.
struct SignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sign", abstract: "Sign a payload after step-up authentication.")

    @OptionGroup var global: GlobalOptions
    @Option(help: "The user to sign for.") var user: String
    @Option(help: "authLevel: 0 none, 1 password or device key, 4 IDV biometric.") var level: Int = 1
    @Option(help: "authenticatorType (0, or 1 with level 4).") var type: Int = 0
    @Option(help: "Why the payload is signed (1-100 characters).") var reason: String
    @Option(help: "The payload (1-500 characters); else --payload-file, else stdin.") var payload: String?
    @Option(name: .customLong("payload-file"), help: ArgumentHelp("Read the payload from a file (- is stdin).", valueName: "file"))
    var payloadFile: String?
    @Option(name: .customLong("password-file"), help: ArgumentHelp("Read the password from a file (first line; - is stdin).", valueName: "file"))
    var passwordFile: String?
    @Option(name: .customLong("password-fd"), help: ArgumentHelp("Read the password from a file descriptor (one line).", valueName: "fd"))
    var passwordFD: Int32?
    @Option(name: .customLong("device-key"), help: "Answer a device key (LDA) challenge with this PKCS#8 PEM private key.")
    var deviceKey: String?
    @Option(name: .customLong("idv-command"), help: "Answer an IDV challenge: run this program with the nonce and the challenge (base64url operation text) as its arguments; it prints the assertion, which must carry txn = base64url(SHA-256(text)).")
    var idvCommand: String?
    @Flag(help: "Print the signing details as JSON instead of the JWS.") var json = false
    @Option(name: .customLong("proof-out"), help: ArgumentHelp("Also write the proof that the signature is in the log (a C2SP tlog-proof, checked before it is written) to this file.", valueName: "file"))
    var proofOut: String?

    func validate() throws {
        if payload != nil, payloadFile != nil {
            throw ValidationError("--payload and --payload-file cannot be used together")
        }
        try SecretSources.validate(["--password-file": passwordFile], ["--password-fd": passwordFD])
        let payloadFromStdin = payload == nil && (payloadFile == nil || payloadFile == "-")
        if payloadFromStdin, PasswordReader(file: passwordFile, descriptor: passwordFD).readsStdin {
            throw ValidationError("the payload is read from stdin, so the password cannot be: give --payload or --payload-file FILE")
        }
    }

    func run() throws {
        try runReportingErrors {
            let payloadText = try readPayload()
            let passwords = PasswordReader(file: passwordFile, descriptor: passwordFD)
            let connection = try global.connect()
            var reply = try connection.call("authenticateUserAndSignData", [
                "user": user, "payload": payloadText, "reason": reason, "authLevel": level, "authenticatorType": type,
            ]).requireAccepted("signing")
            while true {
                guard let event = reply.events.last, let name = event["event"]?.stringValue else {
                    throw CLIError("the daemon sent no event")
                }
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
                    let answer = try DeviceAnswer.sign(event, keyFile: deviceKey)
                    reply = try connection.call("setLDASignature", ["deviceKeyId": answer.kid, "signature": answer.signature])
                        .requireAccepted("device signature")
                case "getIDVBiometric":
                    try reportRetry(event)
                    guard let idvCommand else { throw CLIError("the daemon asks for an IDV assertion; give --idv-command") }
                    let nonce = event["nonce"]?.stringValue ?? ""
                    let challenge = event["challenge"]?.stringValue ?? ""
                    let assertion = try IDVCommand.run(idvCommand, nonce: nonce, challenge: challenge)
                    reply = try connection.call("setIDVBiometricAssertion", ["assertion": assertion])
                        .requireAccepted("IDV assertion")
                case "onAuthenticateUserAndSignData":
                    let status = event["status"] ?? [:]
                    let details = event["details"] ?? [:]
                    guard status["code"]?.int == 100 else {
                        throw CLIError("not signed: \(status["code"] ?? "?") \(status["message"] ?? "")")
                    }
                    if json {
                        JSONOutput.print(details)
                    } else {
                        print(details["payloadSignature"]?.stringValue ?? "")
                    }
                    // After the signature is printed: a proof that fails loses no signature.
                    if let proofOut {
                        try writeProof(details, on: connection, to: proofOut)
                    }
                    return
                default:
                    throw CLIError("this client cannot answer \(name) yet")
                }
            }
        }
    }

    /// `--proof-out`: the new signature's inclusion proof, asked on the session that made it and
    /// checked against the JWS and the daemon's published log keys before it is written.
    private func writeProof(_ details: JSONValue, on connection: StepSignConnection, to path: String) throws {
        guard let signatureID = details["dataSignatureID"]?.stringValue, let jws = details["payloadSignature"]?.stringValue else {
            throw CLIError("the daemon's reply has no dataSignatureID or payloadSignature")
        }
        let proof = try ProofFile.fetch(signatureID, on: connection)
        do {
            _ = try proof.verify(leaf: Array(jws.utf8), logKeys: try ProofFile.logKeys(on: connection))
        } catch let error as NoteError {
            throw CLIError("signed, but the daemon's inclusion proof of \(signatureID) does not check: \(error); nothing written to \(path)")
        }
        try ProofFile.write(proof, to: path)
    }

    /// A retried device or IDV challenge: say why; a scripted answer will not do better.
    private func reportRetry(_ event: JSONValue) throws {
        guard let status = event["status"], let code = status["code"]?.int, code != 100 else { return }
        throw CLIError("not accepted: \(status["message"]?.stringValue ?? "status \(code)")")
    }

    private func readPayload() throws -> String {
        if let payload { return payload }
        let data: Data?
        if let payloadFile, payloadFile != "-" {
            data = FileManager.default.contents(atPath: payloadFile)
            guard data != nil else { throw CLIError("cannot read the payload file \(payloadFile)", exitCode: 2) }
        } else {
            data = FileHandle.standardInput.readDataToEndOfFile()
        }
        guard let data, let text = String(data: data, encoding: .utf8) else {
            throw CLIError("cannot read the payload as UTF-8 text", exitCode: 2)
        }
        return text
    }
}
