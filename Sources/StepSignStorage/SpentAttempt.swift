/// What a wrong answer's reserved attempt came to
/// (``CounterStore/spendAttempt(_:name:maxAttempts:blockSeconds:now:)``).
public enum SpentAttempt: Sendable, Equatable {
    /// Counted as a failure; `attemptsLeft` (at least 1) are left if the answers still in
    /// flight prove right.
    case counted(attemptsLeft: Int)
    /// No attempt is left: the name is blocked. `byThisAnswer` when this failure used the
    /// last attempt (the one whose block is recorded), false when it was blocked already.
    case blocked(byThisAnswer: Bool)
}
