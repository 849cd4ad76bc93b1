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
    @Option(help: "Why the payload is signed (1-100 characters); with --batch, the reason of lines that give none.")
    var reason: String?
    @Option(help: "The payload (1-500 characters); else --payload-file, else stdin.") var payload: String?
    @Option(name: .customLong("payload-file"), help: ArgumentHelp("Read the payload from a file (- is stdin).", valueName: "file"))
    var payloadFile: String?
    @Option(name: .customLong("password-file"), help: ArgumentHelp("Read the password from a file (first line; - is stdin).", valueName: "file"))
    var passwordFile: String?
    @Option(name: .customLong("password-fd"), help: ArgumentHelp("Read the password from a file descriptor (one line).", valueName: "fd"))
    var passwordFD: Int32?
    @Option(name: .customLong("device-key"), help: "Answer a device key (LDA) challenge with this PKCS#8 PEM private key.")
    var deviceKey: String?
    @OptionGroup var fido2Device: FIDO2DeviceOption
    @Option(name: .customLong("idv-command"), help: "Answer an IDV challenge: run this program with the nonce and the challenge (base64url operation text) as its arguments; it prints the assertion, which must carry txn = base64url(SHA-256(text)).")
    var idvCommand: String?
    @Option(help: ArgumentHelp("Sign every payload of this file behind one step-up: JSON lines of {\"payload\", \"reason\"} (- is stdin). Prints one JWS a line, in order.", valueName: "file"))
    var batch: String?
    @Flag(help: "Print the signing details as JSON instead of the JWS (with --batch: one line per signature).") var json = false
    @Flag(name: .customLong("no-wait"), help: "When the request needs approval by several people, print its approval ID and exit 3 instead of waiting for the approvers.")
    var noWait = false
    @Option(name: .customLong("proof-out"), help: ArgumentHelp("Also write the proof that the signature is in the log (a C2SP tlog-proof, checked before it is written) to this file.", valueName: "file"))
    var proofOut: String?
    @Flag(help: "With --proof-out: wait until witnesses cosigned a checkpoint covering the signature (waitForProof), so the proof verifies offline with stepsign-verify --witness ... --quorum K.")
    var witnessed = false
    @Option(help: ArgumentHelp("With --witnessed: how many of the daemon's [[witness]]es must have cosigned (default: all).", valueName: "K"))
    var quorum: Int?
    @Option(name: .customLong("witness-timeout"), help: ArgumentHelp("With --witnessed: seconds to wait for the cosignatures (1-300).", valueName: "seconds"))
    var witnessTimeout: Int = 60
    @Option(name: .customLong("idempotency-key"), help: ArgumentHelp("Send this idempotencyKey (1-64 printable ASCII characters): run again with the same key after an error or a lost connection and the daemon answers with the first signature instead of signing twice.", valueName: "key"))
    var idempotencyKey: String?

    /// `idempotencyKey` as a request parameter, when one is given.
    private var idempotencyParameter: [(String, JSONValue)] {
        idempotencyKey.map { [("idempotencyKey", .string($0))] } ?? []
    }

    func validate() throws {
        if payload != nil, payloadFile != nil {
            throw ValidationError("--payload and --payload-file cannot be used together")
        }
        if let batch {
            if payload != nil || payloadFile != nil { throw ValidationError("--batch cannot be used with --payload or --payload-file") }
            if proofOut != nil { throw ValidationError("--batch cannot be used with --proof-out (ask `stepsign proof` per signature)") }
            if witnessed { throw ValidationError("--batch cannot be used with --witnessed") }
            if batch == "-", PasswordReader(file: passwordFile, descriptor: passwordFD).readsStdin {
                throw ValidationError("the batch is read from stdin, so the password cannot be: give --batch FILE")
            }
        } else if reason == nil {
            throw ValidationError("missing --reason")
        }
        if witnessed, proofOut == nil { throw ValidationError("--witnessed needs --proof-out FILE") }
        if quorum != nil, !witnessed { throw ValidationError("--quorum needs --witnessed") }
        if let quorum, quorum < 1 { throw ValidationError("--quorum must be at least 1") }
        if !(1...300).contains(witnessTimeout) { throw ValidationError("--witness-timeout must be from 1 to 300 seconds") }
        try SecretSources.validate(["--password-file": passwordFile], ["--password-fd": passwordFD])
        let payloadFromStdin = batch == nil && payload == nil && (payloadFile == nil || payloadFile == "-")
        if payloadFromStdin, PasswordReader(file: passwordFile, descriptor: passwordFD).readsStdin {
            throw ValidationError("the payload is read from stdin, so the password cannot be: give --payload or --payload-file FILE")
        }
    }

    func run() throws {
        try runReportingErrors {
            if let batch { return try signBatch(BatchFile(path: batch, defaultReason: reason)) }
            let payloadText = try readPayload()
            let connection = try global.connect()
            let first = try connection.call("authenticateUserAndSignData", [
                ("user", .string(user)), ("payload", .string(payloadText)), ("reason", .string(reason ?? "")),
                ("authLevel", .int(Int64(level))), ("authenticatorType", .int(Int64(type))),
            ] + idempotencyParameter).requireAccepted("signing")
            var event = try responder().answer(first, on: connection, until: "onAuthenticateUserAndSignData",
                                               or: ["onApprovalPending"])
            if event["event"]?.stringValue == "onApprovalPending" {
                event = try waitForApprovals(event, on: connection)
            }
            let status = event["status"] ?? [:]
            let details = event["details"] ?? [:]
            guard status["code"]?.int == 100 else {
                throw CLIError("not signed: \(StatusText.describe(status))")
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
        }
    }

    /// `--batch`: one `authenticateUserAndSignBatch`; the manifest of its challenge is checked
    /// against the file (and shown to a person typing the password) before it is answered.
    private func signBatch(_ file: BatchFile) throws {
        let connection = try global.connect()
        let first = try connection.call("authenticateUserAndSignBatch", [
            ("items", file.parameter), ("authLevel", .int(Int64(level))), ("authenticatorType", .int(Int64(type))),
            ("user", .string(user)),
        ] + idempotencyParameter).requireAccepted("signing the batch")
        var shown = false
        var answering = responder()
        let interactive = !answering.passwords.isScripted
        answering.inspect = { event in
            guard let manifest = event["manifest"] else { throw CLIError("the daemon's batch challenge has no manifest; not answered") }
            try file.check(manifest: manifest)
            if interactive, !shown {
                FileHandle.standardError.write(Data("stepsign: \(BatchFile.describe(manifest))\n".utf8))
                shown = true
            }
        }
        let event = try answering.answer(first, on: connection, until: "onAuthenticateUserAndSignBatch")
        let status = event["status"] ?? [:]
        guard status["code"]?.int == 100 else {
            throw CLIError("nothing signed: \(StatusText.describe(status))")
        }
        let signatures = event["signatures"]?.arrayValue ?? []
        guard signatures.count == file.items.count else {
            throw CLIError("the daemon returned \(signatures.count) signatures for \(file.items.count) items")
        }
        for details in signatures {
            if json {
                JSONOutput.print(details)
            } else {
                print(details["payloadSignature"]?.stringValue ?? "")
            }
        }
    }

    /// A request that waits for approval by several people (SPEC §3.4): says so, then asks
    /// `getApproval` on this connection until the approvers decided (or with --no-wait prints
    /// the approval ID and exits 3). Returns the outcome event.
    private func waitForApprovals(_ pending: JSONValue, on connection: StepSignConnection) throws -> JSONValue {
        let id = pending["approvalID"]?.stringValue ?? ""
        let approvers = pending["approvers"]?.arrayValue?.compactMap(\.stringValue) ?? []
        FileHandle.standardError.write(Data(("stepsign: request \(id) waits for \(pending["required"]?.int ?? 0) approvals of "
            + "\(approvers.joined(separator: ", ")) until \(pending["expiresAt"]?.stringValue ?? "?")\n").utf8))
        if noWait {
            print(id)
            throw ExitCode(3)
        }
        while true {
            let reply = try connection.call("getApproval", [("approvalID", .string(id)), ("waitSeconds", .int(60))], timeout: 90)
                .requireAccepted("getApproval")
            if let outcome = reply.event("onAuthenticateUserAndSignData") { return outcome }
        }
    }

    private func responder() -> StepUpResponder {
        StepUpResponder(user: user, passwords: PasswordReader(file: passwordFile, descriptor: passwordFD),
                        deviceKey: deviceKey, idvCommand: idvCommand, fido2Device: fido2Device.path)
    }

    /// `--proof-out`: the new signature's inclusion proof, asked on the session that made it and
    /// checked against the JWS and the daemon's published log keys before it is written; with
    /// `--witnessed`, once witnesses cosigned a checkpoint covering it (SPEC §5.6).
    private func writeProof(_ details: JSONValue, on connection: StepSignConnection, to path: String) throws {
        guard let signatureID = details["dataSignatureID"]?.stringValue, let jws = details["payloadSignature"]?.stringValue else {
            throw CLIError("the daemon's reply has no dataSignatureID or payloadSignature")
        }
        let proof = witnessed
            ? try ProofFile.fetchWitnessed(signatureID, quorum: quorum, timeoutSeconds: witnessTimeout, on: connection)
            : try ProofFile.fetch(signatureID, on: connection)
        do {
            _ = try proof.verify(leaf: Array(jws.utf8), logKeys: try ProofFile.logKeys(on: connection))
        } catch let error as NoteError {
            throw CLIError("signed, but the daemon's inclusion proof of \(signatureID) does not check: \(error); nothing written to \(path)")
        }
        try ProofFile.write(proof, to: path)
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
