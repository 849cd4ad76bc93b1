import Foundation
import StepSignFormat

/// The last ledger entry's sequence number and hash, and the right edge of the Merkle tree,
/// kept in memory so that an append
/// costs the same at row 1 and at row 1,000,000.
///
/// Only the SQLite writer connection reads or changes it (inside its serialized write
/// accesses); the lock only keeps the type honestly `Sendable`. `dataVersion` is the writer
/// connection's `PRAGMA data_version` when the value was taken: if another process commits
/// to the file, it changes and the tail is read again.
final class LedgerTail: @unchecked Sendable {
    struct State {
        var seq: Int64
        var hash: [UInt8]
        /// The right edge of the log's Merkle tree of `seq` leaves.
        var frontier: MerkleFrontier
        var dataVersion: Int64
    }

    private let lock = NSLock()
    private var state: State?

    var current: State? {
        lock.lock()
        defer { lock.unlock() }
        return state
    }

    func set(_ newState: State?) {
        lock.lock()
        defer { lock.unlock() }
        state = newState
    }
}
