/// Everything stepsignd keeps between requests: users and their counters, password history,
/// device keys, activation codes, signing key metadata and the signature ledger (SPEC §5).
///
/// The engine talks to storage only through this protocol so that a shared backend (for
/// example PostgreSQL serving several daemons) can replace the embedded ``SQLiteStore``.
/// It is small contracts, one per concern, so a part of the engine can ask for just the
/// one it uses: ``CredentialStore``, ``CounterStore``, ``SigningKeyStore``, ``LedgerStore`` (the
/// log), ``LedgerLookupStore`` (the ledger's other reads), ``LogEpochStore``, ``ApprovalStore``,
/// ``IdempotencyStore``.
/// Every requirement is `async`; a store whose work blocks runs it on threads of its own.
///
/// Rules every implementation keeps:
/// - Each method is atomic: it either fully happens or not at all.
/// - Counters (failed attempts, blocks) live in the store, never per connection.
/// - ``commitLedger(_:)`` answers `committed` only after the batch is durably committed,
///   and stores nothing when the log's tail moved.
/// - Methods that change a user return `false` (or `nil`) when the user does not exist,
///   unless documented to throw ``StorageError/noSuchUser(_:)``.
public protocol StepSignStore: CredentialStore, CounterStore, SigningKeyStore, LedgerStore, LedgerLookupStore, LogEpochStore,
    ApprovalStore, IdempotencyStore {
    /// Closes the store. Calls after this fail.
    func close() async throws
}
