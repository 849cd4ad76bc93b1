import Foundation
import PostgresNIO
import StepSignCrypto
import StepSignFormat
import StepSignStorage

/// `stepsign admin migrate --to postgresql` (issue 14): an existing single-host SQLite store
/// copied into an empty PostgreSQL database, all or nothing, and verified.
///
/// The source is held still for the whole run (``SQLiteMigrationSource``: SQLite's write
/// lock); the copy is one PostgreSQL transaction (``PostgresStore/importing(_:)``), which
/// refuses a database that is not empty. Copied: users (password hashes, password state,
/// counters and blocks, credential tokens), the password history, device keys, signing key
/// records, the ledger row by row as it is (same seq, hashes, JWS, peer columns, times) and the
/// checkpoints. Before the commit everything is read back in the same transaction and compared
/// with the source (times as PostgreSQL keeps them, in whole microseconds), and the copied
/// ledger goes through ``LedgerVerifier`` and must verify exactly as the source does (with
/// the keys' public halves when every record has one); after the commit the store's own audit
/// runs over it.
///
/// Also copied (SPEC §3.4, §3): group memberships, requests for approval in every state with
/// their votes and the log's index of their events, sealed again under the target's key and
/// bound as the store binds them (a membership to its event's seq, a request's state to its
/// latest event); and the `idempotencyKey`s as they are, so a retry after the move replays
/// the first signature. A membership or request that fails its seal in the source is copied
/// with no valid seal (it does not hold, and is never acted on, there as here) and reported
/// in the summary; a user that fails is refused (``PostgresImportError/unsealedRecords(users:)``).
///
/// Not copied: the counters of names that are not users and the forgot-password budgets (kept
/// under a keyed hash whose key belongs to the source), open activation codes and used-once
/// values (they answer challenges that lived in the stopped daemon's memory).
public struct SQLiteToPostgresMigration: Sendable {
    /// Ledger rows per page read and written (memory stays at about one page).
    public static let pageSize = 1000

    public let source: SQLiteMigrationSource
    public let target: PostgresStore
    /// `ledger.checkpoint_entries` for the audits (as `admin.auditVerify` uses it), or nil.
    public let checkpointEntries: Int?

    public init(source: SQLiteMigrationSource, target: PostgresStore, checkpointEntries: Int?) {
        self.source = source
        self.target = target
        self.checkpointEntries = checkpointEntries
    }

    /// The checks of `admin.auditVerify` from the key records: every unrevoked key's public
    /// half trusted, and every key revoked at a log index (SPEC §5.4) with it, so that its
    /// entries below the index are valid (the revocation events on the walk set the index
    /// too); entries of keys revoked without one are reported. When a record has no usable
    /// public half (a key recorded before the column existed, by a daemon that has not run
    /// since), the signatures cannot all be checked: the chain only.
    public static func verificationOptions(for records: [SigningKeyRecord], checkpointEntries: Int?) -> LedgerVerifier.Options {
        var keys: [P256PublicKey] = []
        var revokedAt: [String: Int64] = [:]
        for record in records where record.revokedAt == nil || record.revokedIndex != nil {
            guard let pem = record.publicKeyPEM, let key = try? P256PublicKey(spkiPEM: pem), key.thumbprint == record.kid else {
                return LedgerVerifier.Options(trustedKeys: nil)
            }
            keys.append(key)
            if let index = record.revokedIndex { revokedAt[record.kid] = index }
        }
        return LedgerVerifier.Options(trustedKeys: TrustedKeys(keys: keys, revokedAt: revokedAt),
                                      revokedKids: Set(records.filter { $0.revokedAt != nil && $0.revokedIndex == nil }.map(\.kid)),
                                      checkpointEntries: checkpointEntries)
    }

    /// Copies, verifies, commits, audits. Throws ``PostgresImportError`` when the target is not
    /// empty, the source chain is broken or the copy does not read back as the source (nothing
    /// is written then), or the store's errors.
    public func run() async throws -> MigrationSummary {
        let store = source.store
        let users = try await store.listUsers()
        // Seals are carried by sealing again under the target's key (SPEC §5.4): only records
        // that pass their check under the source's key.
        let broken = users.filter { $0.sealFailure != nil }.map(\.name)
        guard broken.isEmpty else { throw PostgresImportError.unsealedRecords(users: broken) }
        let history = try source.passwordHistory()
        let deviceKeys = try source.deviceKeys()
        let fido2 = try source.fido2Credentials()
        let signingKeys = try await store.signingKeys()
        let checkpoints = try await store.ledgerCheckpoints(afterSeq: -1, throughSeq: nil)
        let logCheckpoints = try await store.logCheckpoints(afterSize: -1, throughSize: nil)
        let origin = try await store.logOrigin()
        let epochs = try await store.logEpochs()
        var cosignatures: [LogCosignatureRecord] = []
        for size in Set(logCheckpoints.map(\.size)).sorted() {
            cosignatures += try await store.logCosignatures(size: size)
        }
        let groupMembers = try source.groupMembers()
        let approvals = try await store.allApprovals()
        let votes = try source.approvalVotes()
        let approvalEvents = try source.approvalEvents()
        let sound = Set(approvals.filter { $0.sealFailure == nil }.map(\.id))
        let idempotencyKeys = try source.idempotencyKeys().map(Self.asStored)
        let head = try await store.ledgerHead()
        let verification = Self.verificationOptions(for: signingKeys, checkpointEntries: checkpointEntries)
        // The copy must verify exactly as the source does (a source with entries of a revoked
        // key reports them; so must the copy).
        let sourceAudit = try await store.auditLedger(options: verification)

        let copied = try await target.importing { copy in
            try await copy.insertUsers(users)
            try await copy.insertPasswordHistory(history)
            try await copy.insertDeviceKeys(deviceKeys)
            try await copy.setFIDO2Credentials(fido2)
            var after: Int64 = 0
            while true {
                let page = try await store.ledgerEntries(afterSeq: after, limit: Self.pageSize)
                guard let last = page.last else { break }
                do {
                    try await copy.insertLedgerEntries(page)
                } catch let error as PSQLError where error.serverInfo?[.sqlState] == SQLState.integrityConstraintViolation {
                    throw PostgresImportError.brokenChain(error.serverInfo?[.message] ?? "a ledger row does not chain")
                }
                after = last.seq
            }
            try await copy.insertCheckpoints(checkpoints)
            try await copy.insertLogCheckpoints(logCheckpoints, origin: origin)
            try await copy.insertLogCosignatures(cosignatures)
            try await copy.insertLogEpochs(epochs)
            // Last: the database refuses rows signed with a key it knows as revoked.
            try await copy.insertSigningKeys(signingKeys)
            try await copy.sealRecords()
            try await copy.insertGroupMembers(groupMembers)
            try await copy.insertApprovals(approvals, votes: votes, sound: sound)
            try await copy.insertApprovalEvents(approvalEvents)
            try await copy.sealApprovals(approvals.map(\.id).filter(sound.contains))
            try await copy.insertIdempotencyKeys(idempotencyKeys)

            // Read back in the same transaction: nothing is committed unless it all matches.
            try Self.expect(try await copy.users(), users.map(Self.asStored), "users")
            try Self.expect(try await copy.passwordHistory(), history.map(Self.asStored), "password history")
            try Self.expect(try await copy.deviceKeys(), deviceKeys.map(Self.asStored), "device keys")
            guard try await copy.fido2Credentials() == fido2 else {
                throw PostgresImportError.mismatch("FIDO2 credentials of device keys differ")
            }
            try Self.expect(try await copy.signingKeys(), signingKeys.map(Self.asStored), "signing keys")
            try Self.expect(try await copy.checkpoints(), checkpoints.map(Self.asStored), "checkpoints")
            try Self.expect(try await copy.logCosignatures(), cosignatures.map(Self.asStored), "log cosignatures")
            try Self.expect(try await copy.logEpochs(), epochs.map(Self.asStored), "log epochs")
            let copiedLog = try await copy.logCheckpoints()
            try Self.expect(copiedLog.checkpoints, logCheckpoints.map(Self.asStored), "log checkpoints")
            guard copiedLog.origin == origin else {
                throw PostgresImportError.mismatch("the log's origin is \(copiedLog.origin ?? "none"), the source's \(origin ?? "none")")
            }
            try await Self.expectApprovals(copy, groupMembers: groupMembers, approvals: approvals, votes: votes,
                                           events: approvalEvents, sound: sound)
            try Self.expect(try await copy.idempotencyKeys(), idempotencyKeys, "idempotency keys")
            var verifier = LedgerVerifier(options: verification)
            for checkpoint in checkpoints { verifier.addCheckpoint(checkpoint.jws) }
            for checkpoint in logCheckpoints { verifier.addLogCheckpoint(checkpoint.note) }
            var count: Int64 = 0
            after = 0
            while true {
                let original = try await store.ledgerEntries(afterSeq: after, limit: Self.pageSize)
                let copied = try await copy.ledgerEntries(afterSeq: after, limit: Self.pageSize)
                try Self.expect(copied, original.map(Self.asStored), "ledger entries after seq \(after)")
                guard let last = copied.last else { break }
                verifier.add(contentsOf: copied.map(Self.link))
                count += Int64(copied.count)
                after = last.seq
            }
            let copiedHead = try await copy.ledgerHead()
            guard copiedHead == head, count == head.seq else {
                throw PostgresImportError.mismatch("the ledger head is seq \(copiedHead.seq), the source's \(head.seq)")
            }
            let audit = verifier.finish()
            guard audit == sourceAudit else {
                throw PostgresImportError.mismatch("the copied ledger verifies as \(Self.describe(audit)), the source as \(Self.describe(sourceAudit))")
            }
            return count
        }
        let audit = try await target.auditLedger(options: verification)
        return MigrationSummary(users: users.count, passwordHistoryEntries: history.count, deviceKeys: deviceKeys.count,
                                signingKeys: signingKeys.count, ledgerEntries: copied,
                                checkpoints: checkpoints.count + logCheckpoints.count,
                                groupMembers: groupMembers.count, approvals: approvals.count,
                                pendingApprovals: approvals.filter { $0.state == .pending }.count,
                                approvalVotes: votes.values.map(\.count).reduce(0, +), idempotencyKeys: idempotencyKeys.count,
                                unsealedGroupMembers: groupMembers.filter { !$0.sealed }.map(\.member),
                                unsealedApprovals: approvals.filter { !sound.contains($0.id) }.map(\.id),
                                head: head, signaturesChecked: verification.trustedKeys != nil,
                                sourceAudit: sourceAudit, audit: audit)
    }

    private static func describe(_ audit: LedgerAudit) -> String {
        audit.ok ? "ok (\(audit.entries) entries)" : "not ok at seq \(audit.firstBadSeq.map(String.init) ?? "-"): \(audit.problem ?? "")"
    }

    private static func expect<T: Equatable>(_ copied: [T], _ original: [T], _ what: String) throws {
        guard copied.count == original.count else {
            throw PostgresImportError.mismatch("\(what): \(copied.count) copied, \(original.count) in the source")
        }
        if let index = copied.indices.first(where: { copied[$0] != original[$0] }) {
            throw PostgresImportError.mismatch("\(what): row \(index + 1) differs")
        }
    }

    /// Reads back the memberships, requests, their vote rows and the events' index, and
    /// compares them with the source: each as stored, and each checking (or failing) under the
    /// target's key as it did under the source's.
    private static func expectApprovals(_ copy: PostgresImport, groupMembers: [(member: GroupMember, sealed: Bool)],
                                        approvals: [ApprovalRecord], votes: [String: [(vote: ApprovalVote, sealed: Bool)]],
                                        events: [ApprovalEventIndex], sound: Set<String>) async throws {
        let members = try await copy.groupMembers()
        try expect(members.map(\.member), groupMembers.map(\.member), "group memberships")
        guard members.map(\.sealed) == groupMembers.map(\.sealed) else {
            throw PostgresImportError.mismatch("group memberships do not check as they did in the source")
        }
        try expect(try await copy.approvalEvents(), events, "the index of requests' events")
        let byID = { (records: [ApprovalRecord]) in records.sorted { Array($0.id.utf8).lexicographicallyPrecedes(Array($1.id.utf8)) } }
        let expected = byID(approvals.map { record in
            var record = asStored(record)
            if sound.contains(record.id) {
                record.sealFailure = nil
            } else {
                // Written with no seals: it fails as a record that has none.
                record.votes = []
                record.sealFailure = .missing
            }
            return record
        })
        let copied = byID(try await copy.approvals()).map { record in
            var record = record
            record.votes = sortedByApprover(record.votes)
            return record
        }
        try expect(copied, expected, "requests for approval")
        for record in approvals {
            let stored = sortedByApprover(try await copy.storedVotes(of: record.id))
            try expect(stored, sortedByApprover((votes[record.id] ?? []).map { asStored($0.vote) }),
                       "the approvals of request \(record.id)")
        }
    }

    private static func sortedByApprover(_ votes: [ApprovalVote]) -> [ApprovalVote] {
        votes.sorted { Array($0.approver.utf8).lexicographicallyPrecedes(Array($1.approver.utf8)) }
    }

    /// The entry with every column the verifier checks against the JWS.
    private static func link(_ entry: LedgerEntry) -> LedgerLink {
        LedgerLink(seq: entry.seq, signatureID: entry.signatureID, payloadSignature: entry.jws, prevHash: entry.prevHash,
                   entryHash: entry.entryHash, user: entry.user, kid: entry.kid, iat: entry.iat, peer: entry.peer)
    }

    // Records with their times as PostgreSQL keeps them (whole microseconds).

    private static func asStored(_ user: UserRecord) -> UserRecord {
        var user = user
        user.passwordChangedAt = user.passwordChangedAt.postgresRounded
        user.blockedUntil = user.blockedUntil?.postgresRounded
        user.createdAt = user.createdAt.postgresRounded
        return user
    }

    private static func asStored(_ entry: PasswordHistoryEntry) -> PasswordHistoryEntry {
        var entry = entry
        entry.setAt = entry.setAt.postgresRounded
        return entry
    }

    private static func asStored(_ key: DeviceKeyRecord) -> DeviceKeyRecord {
        var key = key
        key.createdAt = key.createdAt.postgresRounded
        key.revokedAt = key.revokedAt?.postgresRounded
        return key
    }

    private static func asStored(_ key: SigningKeyRecord) -> SigningKeyRecord {
        var key = key
        key.createdAt = key.createdAt.postgresRounded
        key.revokedAt = key.revokedAt?.postgresRounded
        return key
    }

    private static func asStored(_ epoch: LogEpochRecord) -> LogEpochRecord {
        var epoch = epoch
        epoch.createdAt = epoch.createdAt.postgresRounded
        return epoch
    }

    private static func asStored(_ cosignature: LogCosignatureRecord) -> LogCosignatureRecord {
        var cosignature = cosignature
        cosignature.createdAt = cosignature.createdAt.postgresRounded
        return cosignature
    }

    private static func asStored(_ checkpoint: LogCheckpointRecord) -> LogCheckpointRecord {
        var checkpoint = checkpoint
        checkpoint.createdAt = checkpoint.createdAt.postgresRounded
        return checkpoint
    }

    private static func asStored(_ checkpoint: LedgerCheckpointRecord) -> LedgerCheckpointRecord {
        var checkpoint = checkpoint
        checkpoint.createdAt = checkpoint.createdAt.postgresRounded
        return checkpoint
    }

    private static func asStored(_ record: ApprovalRecord) -> ApprovalRecord {
        var record = record
        record.createdAt = record.createdAt.postgresRounded
        record.expiresAt = record.expiresAt.postgresRounded
        record.decidedAt = record.decidedAt?.postgresRounded
        record.votes = sortedByApprover(record.votes.map(asStored))
        return record
    }

    private static func asStored(_ vote: ApprovalVote) -> ApprovalVote {
        var vote = vote
        vote.at = vote.at.postgresRounded
        return vote
    }

    /// Times PostgreSQL can hold: a claim given up in SQLite (pending until -1e300 seconds)
    /// is pending until `Date.distantPast`, before any now as the store's `-infinity` is.
    private static func asStored(_ key: IdempotencyKeyRecord) -> IdempotencyKeyRecord {
        var key = key
        key.pendingUntil = min(max(key.pendingUntil, .distantPast), .distantFuture).postgresRounded
        key.expiresAt = min(max(key.expiresAt, .distantPast), .distantFuture).postgresRounded
        return key
    }

    private static func asStored(_ entry: LedgerEntry) -> LedgerEntry {
        var entry = entry
        entry.createdAt = entry.createdAt.postgresRounded
        return entry
    }
}
