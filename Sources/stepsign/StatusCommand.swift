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
            print("stepsignd \(result["version"] ?? "?"), up \(Self.duration(result["uptimeSeconds"]?.int ?? 0))")
            print("active key \(result["activeKid"]?.stringValue ?? "none")")
            print("\(result["signatures"] ?? 0) signatures")
            if let witnessed = result["witnessed"]?.boolValue {
                print("latest checkpoint \(witnessed ? "witnessed" : "not witnessed") (ledger.witness_quorum)")
            }
        }
    }

    /// "2d 3h 4m 5s", leaving out leading zero units.
    static func duration(_ seconds: Int) -> String {
        let parts = [(seconds / 86400, "d"), (seconds / 3600 % 24, "h"), (seconds / 60 % 60, "m"), (seconds % 60, "s")]
        let shown = parts.drop { $0.0 == 0 && $0.1 != "s" }
        return shown.map { "\($0.0)\($0.1)" }.joined(separator: " ")
    }
}
