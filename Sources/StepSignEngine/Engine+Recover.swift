import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import StepSignStorage

extension Engine {
    /// `admin.recover` (SPEC §5.5, issue 27): after a restore that lost entries, the daemon
    /// refuses to sign, because the log is shorter than the last checkpoint it signed. This
    /// starts a new log epoch: a `logEpochStarted` event (signed, in the log, naming the new
    /// origin, the previous one, the previous checkpoint and the lost range), then the first
    /// checkpoint under the new origin, kept in place of the old one, and signing resumes.
    /// Refused (4) when nothing was lost or the log was rewritten rather than cut.
    func recoverLog(context: RequestContext) async throws -> Reply {
        let events = signing.events
        let instance = context.config.instance, peer = context.peer, now = context.now
        let started = try await signing.log.startEpoch(now: now) { details in
            try await events.recordEpochStart(details: details, peer: peer, instance: instance, now: now)
        }
        return Reply(result: [
            "epoch": .int(started.epoch.epoch),
            "origin": .string(started.epoch.origin),
            "previousOrigin": .string(started.previousOrigin),
            "previousCheckpoint": .string(started.previous.note.serialized),
            "lostFrom": .int(started.lostFrom),
            "lostThrough": .int(started.previous.checkpoint.size - 1),
            "eventID": .string(started.event.signatureID),
            "logIndex": .int(started.event.seq - 1),
            "checkpoint": .string(started.checkpoint.note.serialized),
        ])
    }
}
