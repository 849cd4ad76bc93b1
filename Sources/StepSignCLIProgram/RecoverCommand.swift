import ArgumentParser
import StepSignProtocol

/// `stepsign admin recover` (SPEC §5.5, issue 27): after a restore that lost entries the daemon
/// refuses to sign (its log is shorter than the last checkpoint it signed); this starts a new
/// log epoch, under a new origin, whose first event names the old log's last checkpoint and the
/// entries lost, and the daemon signs again.
struct RecoverCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recover",
        abstract: "Start a new log epoch after a restore that lost entries.",
        discussion: """
            Only when the daemon refuses to sign because its log is shorter than the last \
            checkpoint it signed (stepsign status shows logProblem). The loss is recorded, not \
            hidden: a signed logEpochStarted event names the previous checkpoint and the lost \
            range, and checkpoints carry a new origin (<origin>/epoch<N>), so witnesses and \
            monitors see a new log (give them its key: stepsign keys export --log-keys). \
            --json prints {epoch, origin, previousOrigin, previousCheckpoint, lostFrom, \
            lostThrough, eventID, logIndex, checkpoint}.
            """
    )
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: JSONFlag

    func run() throws {
        try runReportingErrors {
            let reply = try global.connect().call("admin.recover").requireAccepted("admin.recover")
            let result = reply.result ?? [:]
            if output.json {
                JSONOutput.print(result)
                return
            }
            let from = result["lostFrom"]?.int ?? 0, through = result["lostThrough"]?.int ?? 0
            let lost = through - from + 1
            print("new log epoch \(result["epoch"]?.int ?? 0): origin \(result["origin"]?.stringValue ?? "")"
                  + " (was \(result["previousOrigin"]?.stringValue ?? ""))")
            print("lost: log indexes \(from) to \(through) (\(lost) \(lost == 1 ? "entry" : "entries")),"
                  + " recorded by event \(result["eventID"]?.stringValue ?? "") at index \(result["logIndex"]?.int ?? 0)")
            print("signing resumes; give witnesses and monitors the new origin's log key (stepsign keys export --log-keys)")
        }
    }
}
