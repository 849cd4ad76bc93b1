import ArgumentParser
import StepSignProtocol

/// `stepsign status`: the daemon's version, uptime, active key and signature count.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show the daemon's status.",
        discussion: "--json prints the status result of docs/protocol.md: version, uptimeSeconds, activeKid, signatures."
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: JSONFlag

    static let fields = ["version", "uptimeSeconds", "activeKid", "signatures"]

    func run() throws {
        try runReportingErrors {
            let result = try global.connect().call("status").requireAccepted("status").result ?? [:]
            if output.json {
                JSONOutput.print(JSONOutput.withFields(result, Self.fields))
                return
            }
            print(Self.lines(result).joined(separator: "\n"))
        }
    }

    /// The status as a person reads it, one fact a line: plain values, never the client's
    /// own representation of them.
    static func lines(_ result: JSONValue) -> [String] {
        let signatures = result["signatures"]?.int ?? 0
        var lines = [
            "stepsignd \(result["version"]?.stringValue ?? "?"), up \(duration(result["uptimeSeconds"]?.int ?? 0))",
            "active key \(result["activeKid"]?.stringValue ?? "none")",
            signatures == 1 ? "1 signature" : "\(signatures) signatures",
        ]
        if let problem = result["logProblem"]?.stringValue { lines.append("log problem: \(problem)") }
        if let witnessed = result["witnessed"]?.boolValue {
            lines.append("latest checkpoint \(witnessed ? "witnessed" : "not witnessed") (ledger.witness_quorum)")
        }
        return lines
    }

    /// "2d 3h 4m 5s", leaving out leading zero units.
    static func duration(_ seconds: Int) -> String {
        let parts = [(seconds / 86400, "d"), (seconds / 3600 % 24, "h"), (seconds / 60 % 60, "m"), (seconds % 60, "s")]
        let shown = parts.drop { $0.0 == 0 && $0.1 != "s" }
        return shown.map { "\($0.0)\($0.1)" }.joined(separator: " ")
    }
}

/// An event's `status` as a person reads it: "153 Attempts exhausted, the user is blocked".
enum StatusText {
    static func describe(_ status: JSONValue) -> String {
        let code = status["code"]?.int.map(String.init) ?? "?"
        let message = status["message"]?.stringValue ?? ""
        return message.isEmpty ? code : "\(code) \(message)"
    }
}
