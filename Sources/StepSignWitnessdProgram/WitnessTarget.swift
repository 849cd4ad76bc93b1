import StepSignFormat

/// One `[[witness]]` as the pusher knows it: where to submit, the key its cosignatures must
/// verify with, and what it learned of the witness.
struct WitnessTarget: Sendable {
    var name: String
    /// `<url>/add-checkpoint`.
    var endpoint: String
    var key: NoteVerifierKey
    /// The size the witness last cosigned, as far as the pusher knows (nil: not yet asked).
    var knownSize: Int64?
    /// Consecutive failures to reach it (timeouts, refused connections, 5xx): the back-off's exponent.
    var failures = 0
    /// No submission before this time (back-off).
    var retryAt: ContinuousClock.Instant?
    /// The checkpoint size the witness refused for a reason a retry cannot change (400, 403,
    /// 404, 409 at its own size, 422, a bad cosignature): not submitted again; a newer one is.
    var refusedSize: Int64?

    init(name: String, url: String, key: NoteVerifierKey) {
        self.name = name
        self.endpoint = (url.hasSuffix("/") ? String(url.dropLast()) : url) + "/add-checkpoint"
        self.key = key
    }

    /// The delay before the next try after `failures` consecutive failures: 1 s doubling to
    /// 5 minutes, with up to a quarter more at random so that pushers do not retry in step.
    static func backOff(failures: Int) -> Duration {
        let base = min(300.0, Double(1 << min(failures - 1, 9)))
        return .milliseconds(Int64(base * 1000 * Double.random(in: 1.0...1.25)))
    }
}
