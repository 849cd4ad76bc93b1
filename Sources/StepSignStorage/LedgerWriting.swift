/// How a store's ledger appends are best called (``StepSignStore/ledgerWriting``).
public enum LedgerWriting: Sendable, Equatable {
    /// From a dedicated thread, through the blocking
    /// ``StepSignStore/appendLedger(_:checkpointEvery:signCheckpoint:)``: the commit is a local
    /// disk write and a thread of its own saves a hop per batch (SQLite).
    case blockingThread
    /// From a task, through ``StepSignStore/commitLedgerBatch(_:checkpointEvery:signCheckpoint:)``:
    /// the commit waits on a server, and no thread may be held while it does (PostgreSQL).
    case async
}
