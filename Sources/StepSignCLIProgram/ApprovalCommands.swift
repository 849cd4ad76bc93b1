import ArgumentParser
import Foundation
import StepSignProtocol

/// `stepsign approvals`: log in and list the requests waiting for your approval (SPEC §3.4).
struct ApprovalsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "approvals", abstract: "List the requests waiting for your approval.",
        discussion: "Logs in as --user. --json prints the array of requests as the daemon gives them.")

    @OptionGroup var global: GlobalOptions
    @Option(help: "Your user ID.") var user: String
    @OptionGroup var passwords: PasswordOptions
    @OptionGroup var output: JSONFlag

    func run() throws {
        try runReportingErrors {
            let flow = try LoginFlow.loggedIn(global, user: user, options: passwords)
            let requests = try flow.send("listApprovals").result?["approvals"]?.arrayValue ?? []
            _ = try? flow.send("logOff")
            if output.json { return JSONOutput.print(.array(requests)) }
            if requests.isEmpty { print("no requests wait for your approval") }
            for request in requests { print(ApprovalText.describe(request)) }
        }
    }
}

/// `stepsign approve ID` / `stepsign deny ID --reason R`: log in, show the request, then give
/// the step-up its rule asks for, bound to the request's digest.
struct ApproveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "approve", abstract: "Approve a request, after showing it.")

    @OptionGroup var answer: ApprovalAnswerOptions
    @Argument(help: "The approval ID.") var approvalID: String

    func run() throws {
        try runReportingErrors { try answer.run(approvalID: approvalID, op: "approveRequest", extra: []) }
    }
}

struct DenyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "deny", abstract: "Deny a request, after showing it.")

    @OptionGroup var answer: ApprovalAnswerOptions
    @Argument(help: "The approval ID.") var approvalID: String
    @Option(help: "Why (1-100 characters).") var reason: String

    func run() throws {
        try runReportingErrors { try answer.run(approvalID: approvalID, op: "denyRequest", extra: [("reason", .string(reason))]) }
    }
}

/// What `approve` and `deny` share: who answers and how they step up.
struct ApprovalAnswerOptions: ParsableArguments {
    @OptionGroup var global: GlobalOptions
    @Option(help: "Your user ID.") var user: String
    @OptionGroup var passwords: PasswordOptions
    @Option(name: .customLong("device-key"), help: "Answer a device key (LDA) challenge with this PKCS#8 PEM private key.")
    var deviceKey: String?
    @OptionGroup var fido2Device: FIDO2DeviceOption
    @Option(name: .customLong("idv-command"), help: "Answer an IDV challenge with this program (as for `stepsign sign`).")
    var idvCommand: String?
    @Flag(help: "Do not show the request first (scripts that read it with `stepsign approvals --json`).") var quiet = false

    func run(approvalID: String, op: String, extra: [(String, JSONValue)]) throws {
        let flow = try LoginFlow.loggedIn(global, user: user, options: passwords)
        let requests = try flow.send("listApprovals").result?["approvals"]?.arrayValue ?? []
        // What is approved is shown before the step-up is asked for.
        if let request = requests.first(where: { $0["approvalID"]?.stringValue == approvalID }), !quiet {
            FileHandle.standardError.write(Data((ApprovalText.describe(request) + "\n").utf8))
        }
        let first = try flow.connection.call(op, [("approvalID", .string(approvalID))] + extra).requireAccepted(op)
        let responder = StepUpResponder(user: user, passwords: passwords.current, deviceKey: deviceKey, idvCommand: idvCommand,
                                        fido2Device: fido2Device.path)
        let event = try responder.answer(first, on: flow.connection, until: "onApprovalResponse")
        _ = try? flow.send("logOff")
        guard event["status"]?["code"]?.int == 100 else {
            throw CLIError("not taken: \(event["status"]?["message"]?.stringValue ?? "?")")
        }
        let state = event["state"]?.stringValue ?? "?"
        let count = event["approvals"]?.int ?? 0, required = event["required"]?.int ?? 0
        print(op == "denyRequest" ? "denied \(approvalID)" : "approved \(approvalID): \(count) of \(required), \(state)")
    }
}

/// A request for approval as a person reads it.
enum ApprovalText {
    static func describe(_ request: JSONValue) -> String {
        let peer = request["peer"]
        let approvals = request["approvals"]?.arrayValue?.compactMap { $0["user"]?.stringValue } ?? []
        return """
            \(request["approvalID"]?.stringValue ?? "?"): \(request["requester"]?.stringValue ?? "?") asks to sign for "\(request["reason"]?.stringValue ?? "")"
              payload: \(request["payload"]?.stringValue ?? "") (SHA-256 \(request["payloadSHA256"]?.stringValue ?? ""))
              asked by: \(peer?["comm"]?.stringValue ?? "?") (pid \(peer?["pid"]?.int ?? 0), uid \(peer?["uid"]?.int ?? 0)) at level \(request["authLevel"]?.int ?? 0)
              approvals: \(approvals.count) of \(request["required"]?.int ?? 0)\(approvals.isEmpty ? "" : " (" + approvals.joined(separator: ", ") + ")"), until \(request["expiresAt"]?.stringValue ?? "?")
            """
    }
}
