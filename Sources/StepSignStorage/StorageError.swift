/// The errors a ``StepSignStore`` reports about the data it holds.
///
/// Failures of the backend itself (I/O, a corrupt file, a closed store) are reported by the
/// backend's own error types; the engine treats those as internal errors.
public enum StorageError: Error, Sendable, Equatable {
    /// A user with this name already exists.
    case userExists(String)
    /// A user ID that looks like an existing user's (SPEC §3: canonically equivalent or equal
    /// ignoring case, ``UserIDForm/lookalikeKey(_:)``): the new ID, then the existing one.
    case userLookalike(String, existing: String)
    /// There is no user with this name.
    case noSuchUser(String)
    /// A device key with this kid is already registered.
    case deviceKeyExists(String)
    /// A signing key with this kid is already recorded.
    case signingKeyExists(String)
    /// A ledger row or checkpoint was signed with a key that has been revoked (by this daemon
    /// or, on a shared database, another one); nothing of the batch was written.
    case signingKeyRevoked(String)
    /// A ledger append reused a signature ID that is already in the ledger (or in the batch).
    case duplicateSignatureID(String)
    /// The state directory could not be created or is not a directory.
    case stateDirectory(path: String, errno: Int32)
    /// The state file could not be created or its permissions could not be set.
    case stateFile(path: String, errno: Int32)
    /// A stored row cannot be read back as a record (a hand-edited or damaged file).
    case malformedRow(table: String, detail: String)
    /// The connection to a database server broke after a ledger batch's `COMMIT` was sent, and
    /// the store could not find out within its bound whether the batch was committed: these
    /// signatures may or may not be in the ledger (they were handed to no one).
    case ledgerCommitOutcomeUnknown(signatureIDs: [String])
    /// The user's record failed its seal check (SPEC §5.4): it is not used and not changed
    /// (a change would seal what someone wrote behind the daemon's back).
    case recordSealBroken(user: String, SealFailure)
    /// The store's `seal_check` does not match the seal key: the key is not the one this
    /// database was sealed with (another host's, or a lost `keys/seal.key`).
    case sealKeyMismatch
    /// A request for approval failed its check (SPEC §3.4): it is not acted on and not changed.
    case approvalSealBroken(id: String, SealFailure)
    /// The log's Merkle tree (SPEC §5.5) lacks a hash it must have, or does not match the
    /// entries it was made of: appended to no further until the database is repaired.
    case ledgerTreeBroken(String)
    /// A log epoch of this number, or with this origin, is stored already (SPEC §5.5: two
    /// recoveries at once start one epoch).
    case logEpochExists(Int64)
}
