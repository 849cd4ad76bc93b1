import ArgumentParser

/// `stepsign status`: the daemon's version, uptime, active key and signature count.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show the daemon's status.")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        try runReportingErrors {
            let reply = try global.connect().call("status").requireAccepted("status")
            JSONOutput.print(reply.result ?? [:])
        }
    }
}
