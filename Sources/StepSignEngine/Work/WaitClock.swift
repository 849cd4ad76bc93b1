/// The clock an answer waits on while the attempts it needs are held by checks in flight
/// (SPEC §5.1, `password.check_wait_seconds`): where the wait is measured, and how it pauses
/// between two asks of the store.
///
/// Real time by default; a test passes its own, whose `sleep` moves its `now` (and may settle
/// the checks waited for), so the wait is exercised without being slept on.
struct WaitClock: Sendable {
    /// The time now, on a clock that does not jump.
    var now: @Sendable () -> ContinuousClock.Instant
    /// Pauses for about `duration`.
    var sleep: @Sendable (_ duration: Duration) async -> Void

    /// Real time: `ContinuousClock` and `Task.sleep`.
    static let continuous = WaitClock(now: { ContinuousClock.now }, sleep: { try? await Task.sleep(for: $0) })
}
