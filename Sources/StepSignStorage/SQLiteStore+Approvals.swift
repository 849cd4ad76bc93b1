import Foundation
import GRDB
import StepSignFormat

// Requests waiting for approval by several people, and user groups (SPEC §3.4).
extension SQLiteStore {
    static let approvalColumns = """
        id, requester, payload, payload_length, reason, auth_level, auth_type, authenticator_used, peer_uid, peer_pid,
        peer_comm, approvers, required, approver_level, approver_type, rule_key, created_at, expires_at, seal, state,
        signature_id, decided_by, decision_reason, decided_at
        """

    /// A request row as stored (votes not read), and its seal.
    static func decodeApproval(_ row: Row) throws -> (ApprovalRecord, [UInt8]?) {
        do {
            let approvers: String = try row.decode(forColumn: "approvers")
            guard let state = ApprovalState(rawValue: try row.decode(forColumn: "state")) else {
                throw StorageError.malformedRow(table: "approvals", detail: "state")
            }
            let record = ApprovalRecord(
                id: try row.decode(forColumn: "id"), requester: try row.decode(forColumn: "requester"),
                payload: try row.decode(forColumn: "payload"), payloadLength: try row.decode(forColumn: "payload_length"),
                reason: try row.decode(forColumn: "reason"), authLevel: try row.decode(forColumn: "auth_level"),
                authenticatorType: try row.decode(forColumn: "auth_type"),
                authenticatorUsed: try row.decode(forColumn: "authenticator_used"),
                peer: LedgerPeer(uid: try row.decode(forColumn: "peer_uid"), pid: try row.decode(forColumn: "peer_pid"),
                                 comm: try row.decode(forColumn: "peer_comm")),
                rule: ApprovalRuleSnapshot(approvers: approvers.split(separator: "\n").map(String.init),
                                           required: try row.decode(forColumn: "required"),
                                           level: try row.decode(forColumn: "approver_level"),
                                           type: try row.decode(forColumn: "approver_type"),
                                           key: try row.decode(forColumn: "rule_key")),
                createdAt: Date(storageSeconds: try row.decode(forColumn: "created_at")),
                expiresAt: Date(storageSeconds: try row.decode(forColumn: "expires_at")),
                state: state, signatureID: try row.decode(forColumn: "signature_id"),
                decidedBy: try row.decode(forColumn: "decided_by"), decisionReason: try row.decode(forColumn: "decision_reason"),
                decidedAt: (try row.decode(Double?.self, forColumn: "decided_at")).map(Date.init(storageSeconds:)))
            let seal: Data? = try row.decode(forColumn: "seal")
            return (record, seal.map { [UInt8]($0) })
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError.malformedRow(table: "approvals", detail: "\(error)")
        }
    }

    /// The request `id` in `db`, checked (``ApprovalRecord/sealFailure``); nil when absent.
    func checkedApproval(_ db: Database, _ id: String) throws -> ApprovalRecord? {
        guard let row = try Row.fetchOne(db, sql: "SELECT \(Self.approvalSelect) FROM approvals WHERE id = ?", arguments: [id])
        else { return nil }
        return try checked(db, row)
    }

    /// The columns of a checked read: the request, its state seal and the log index of its
    /// latest event.
    static let approvalSelect = """
        \(approvalColumns), event_index, state_seal,
        (SELECT max(seq) FROM approval_events WHERE approval_id = approvals.id) AS latest_event
        """

    /// `row`'s request (selected with ``approvalSelect``) with its votes whose own seals check,
    /// and its check against both seals and the log.
    private func checked(_ db: Database, _ row: Row) throws -> ApprovalRecord {
        var (record, seal) = try Self.decodeApproval(row)
        let stored = try Self.storedVotes(db, record.id)
        for (vote, voteSeal) in stored where credentialSeal.matches(voteSeal, credentialSeal.seal(vote, approvalID: record.id)) {
            record.votes.append(vote)
        }
        do {
            let stateSeal: Data? = try row.decode(forColumn: "state_seal")
            let eventIndex: Int64? = try row.decode(forColumn: "event_index")
            let latest = (try row.decode(Int64?.self, forColumn: "latest_event")).map { $0 - 1 } ?? SealBinding.noEvent
            record.sealFailure = credentialSeal.failure(of: record, seal: seal, stateSeal: stateSeal.map { [UInt8]($0) },
                                                        eventIndex: eventIndex, storedVotes: stored.map(\.0),
                                                        latestEventIndex: latest)
        } catch {
            throw StorageError.malformedRow(table: "approvals", detail: "\(error)")
        }
        return record
    }

    /// Every vote row of request `id` as stored, with its seal.
    private static func storedVotes(_ db: Database, _ id: String) throws -> [(ApprovalVote, [UInt8]?)] {
        try Row.fetchAll(db.cachedStatement(sql: """
            SELECT approver, auth_level, authenticator, at, seal FROM approval_votes WHERE approval_id = ? ORDER BY at, rowid
            """), arguments: [id]).map { vote in
            do {
                let decoded = ApprovalVote(approver: try vote.decode(forColumn: "approver"), authLevel: try vote.decode(forColumn: "auth_level"),
                                           authenticator: try vote.decode(forColumn: "authenticator"),
                                           at: Date(storageSeconds: try vote.decode(forColumn: "at")))
                let seal: Data? = try vote.decode(forColumn: "seal")
                return (decoded, seal.map { [UInt8]($0) })
            } catch {
                throw StorageError.malformedRow(table: "approval_votes", detail: "\(error)")
            }
        }
    }

    /// Seals request `id`'s state as stored now, bound to its latest event in the log. Call only
    /// on a request that passed its check in the same transaction, after changing it.
    func resealApproval(_ db: Database, _ id: String) throws {
        guard let row = try Row.fetchOne(db, sql: "SELECT \(Self.approvalSelect) FROM approvals WHERE id = ?", arguments: [id])
        else { return }
        let (record, _) = try Self.decodeApproval(row)
        let latest = (try row.decode(Int64?.self, forColumn: "latest_event")).map { $0 - 1 } ?? SealBinding.noEvent
        let votes = try Self.storedVotes(db, id).map(\.0)
        try db.execute(sql: "UPDATE approvals SET event_index = ?, state_seal = ? WHERE id = ?",
                       arguments: [latest, Data(credentialSeal.sealState(of: record, votes: votes, eventIndex: latest)), id])
    }

    /// The request `id`, checked and sound, for a change in this transaction; else throws
    /// ``StorageError/approvalSealBroken(id:_:)``. Nil when absent.
    private func soundApproval(_ db: Database, _ id: String) throws -> ApprovalRecord? {
        guard let record = try checkedApproval(db, id) else { return nil }
        if let failure = record.sealFailure { throw StorageError.approvalSealBroken(id: id, failure) }
        return record
    }

    public func createApproval(_ record: ApprovalRecord) async throws {
        try await pool.write { db in
            try db.execute(sql: """
                INSERT INTO approvals (\(Self.approvalColumns))
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [
                    record.id, record.requester, record.payload, record.payloadLength, record.reason, record.authLevel,
                    record.authenticatorType, record.authenticatorUsed, record.peer.uid, record.peer.pid, record.peer.comm,
                    record.rule.approvers.joined(separator: "\n"), record.rule.required, record.rule.level, record.rule.type,
                    record.rule.key, record.createdAt.storageSeconds, record.expiresAt.storageSeconds,
                    Data(self.credentialSeal.seal(record)), record.state.rawValue, record.signatureID, record.decidedBy,
                    record.decisionReason, record.decidedAt?.storageSeconds,
                ])
            try self.resealApproval(db, record.id)
        }
    }

    public func approval(id: String) async throws -> ApprovalRecord? {
        try await pool.read { db in try self.checkedApproval(db, id) }
    }

    public func pendingApprovals() async throws -> [ApprovalRecord] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.approvalSelect) FROM approvals WHERE state = 'pending' ORDER BY created_at, id")
                .map { try self.checked(db, $0) }
        }
    }

    public func allApprovals() async throws -> [ApprovalRecord] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.approvalSelect) FROM approvals ORDER BY created_at, id").map { try self.checked(db, $0) }
        }
    }

    public func addApprovalVote(id: String, vote: ApprovalVote, now: Date) async throws -> ApprovalVoteOutcome {
        try await pool.write { db in
            guard let record = try self.checkedApproval(db, id) else { return .unknown }
            if case let .refuse(outcome) = ApprovalVoteRule.step(for: vote, on: record, now: now) { return outcome }
            // Byte-wise (BINARY collation): an NFD twin of an approver is another approver,
            // who has to be one in their own right.
            let taken = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM approval_votes WHERE approval_id = ? AND approver = ?)",
                                          arguments: [id, vote.approver]) ?? false
            guard !taken else { return .alreadyApproved }
            try db.execute(sql: """
                INSERT INTO approval_votes (approval_id, approver, auth_level, authenticator, at, seal) VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [id, vote.approver, vote.authLevel, vote.authenticator, vote.at.storageSeconds,
                                 Data(self.credentialSeal.seal(vote, approvalID: id))])
            try self.resealApproval(db, id)
            var counted = record
            counted.votes.append(vote)
            return .counted(counted)
        }
    }

    public func completeApproval(id: String, voters: [String], qualified: [String], reserving signatureID: String,
                                 now: Date) async throws -> ApprovalCompletion {
        try await pool.write { db in
            guard let record = try self.checkedApproval(db, id) else { return .unknown }
            let stored = try Self.storedVotes(db, id).map(\.0.approver)
            switch ApprovalVoteRule.completion(of: record, storedVoters: stored, voters: voters, qualified: qualified) {
            case let .refuse(outcome):
                return outcome
            case let .apply(drop, approves):
                for approver in drop {
                    try db.execute(sql: "DELETE FROM approval_votes WHERE approval_id = ? AND approver = ?", arguments: [id, approver])
                }
                if approves {
                    try db.execute(sql: "UPDATE approvals SET state = 'approved', signature_id = ?, decided_at = ? WHERE id = ?",
                                   arguments: [signatureID, now.storageSeconds, id])
                }
                if approves || !drop.isEmpty { try self.resealApproval(db, id) }
                return ApprovalVoteRule.outcome(of: record, dropping: drop, approves: approves, signatureID: signatureID,
                                                now: Date(storageSeconds: now.storageSeconds))
            }
        }
    }

    public func endApproval(id: String, as state: ApprovalState, by: String?, reason: String, now: Date) async throws -> Bool {
        try await pool.write { db in
            guard try self.soundApproval(db, id)?.state == .pending else { return false }
            try db.execute(sql: """
                UPDATE approvals SET state = ?, decided_by = ?, decision_reason = ?, decided_at = ? WHERE id = ? AND state = 'pending'
                """, arguments: [state.rawValue, by, reason, now.storageSeconds, id])
            try self.resealApproval(db, id)
            return true
        }
    }

    public func expireApprovals(now: Date) async throws -> [ApprovalRecord] {
        try await pool.write { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT \(Self.approvalSelect) FROM approvals WHERE state = 'pending' AND expires_at <= ? ORDER BY expires_at, id
                """, arguments: [now.storageSeconds])
            var expired: [ApprovalRecord] = []
            for row in rows {
                var record = try self.checked(db, row)
                // One that fails its check is never acted on, not even ended.
                guard record.sealFailure == nil else { continue }
                try db.execute(sql: """
                    UPDATE approvals SET state = 'expired', decision_reason = 'timeout', decided_at = ? WHERE id = ?
                    """, arguments: [now.storageSeconds, record.id])
                try self.resealApproval(db, record.id)
                record.state = .expired
                expired.append(record)
            }
            return expired
        }
    }

    public func markApprovalSigned(id: String, signatureID: String) async throws -> Bool {
        try await pool.write { db in
            guard try self.soundApproval(db, id)?.state == .approved else { return false }
            try db.execute(sql: "UPDATE approvals SET state = 'signed', signature_id = ? WHERE id = ? AND state = 'approved'",
                           arguments: [signatureID, id])
            try self.resealApproval(db, id)
            return true
        }
    }

    // MARK: Binding to the log

    /// The requests `batch`'s events name that pass their check now, to be bound to those events
    /// once they are in (``bindApprovals(_:_:)``). One that fails stays as it is.
    func approvalsToBind(_ db: Database, _ batch: [LedgerAppend]) throws -> [String] {
        try LedgerAppend.approvalsNamedByEvents(batch).filter { id in
            guard let record = try checkedApproval(db, id) else { return false }
            return record.sealFailure == nil
        }
    }

    /// Indexes the events of `entries` that name a request (`approval_events`), then seals the
    /// requests `bound` (``approvalsToBind(_:_:)``) again, bound to their new latest event.
    func bindApprovals(_ entries: [(seq: Int64, approvalID: String)], _ bound: [String], _ db: Database) throws {
        let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO approval_events (approval_id, seq) VALUES (?, ?)")
        for entry in entries { try insert.execute(arguments: [entry.approvalID, entry.seq]) }
        for id in bound { try resealApproval(db, id) }
    }

    /// The upgrade (schema v13): every event already in the ledger that names a request is
    /// indexed in `approval_events`. Its claims are read unverified: this only indexes, and
    /// `admin.auditVerify` verifies every entry.
    static func indexApprovalEvents(_ db: Database) throws {
        let rows = try Row.fetchAll(db, sql: "SELECT seq, jws FROM ledger WHERE auth_level < 0 ORDER BY seq")
        for row in rows {
            let jws: String = try row.decode(forColumn: "jws")
            guard let id = LedgerEvent.unverifiedClaims(jws)?.detail("approvalID") else { continue }
            try db.execute(sql: "INSERT OR IGNORE INTO approval_events (approval_id, seq) VALUES (?, ?)",
                           arguments: [id, try row.decode(Int64.self, forColumn: "seq")])
        }
    }

    /// Seals, once, the state of every request stored before state seals existed (the upgrade),
    /// bound to its latest event; those whose fixed seal fails are left unsealed. Afterwards a
    /// request without a state seal is never sealed: it fails as ``SealFailure/missing``.
    func prepareApprovalSeals() throws {
        try pool.write { db in
            guard try Data.fetchOne(db, sql: "SELECT value FROM store_secrets WHERE name = 'approval_state_seals'") == nil else {
                return
            }
            let rows = try Row.fetchAll(db, sql: "SELECT \(Self.approvalSelect) FROM approvals WHERE state_seal IS NULL")
            for row in rows {
                let (record, seal) = try Self.decodeApproval(row)
                guard self.credentialSeal.matches(seal, self.credentialSeal.seal(record)) else { continue }
                try self.resealApproval(db, record.id)
            }
            try db.execute(sql: "INSERT INTO store_secrets (name, value) VALUES ('approval_state_seals', x'01')")
        }
    }

    public func addGroupMember(_ member: GroupMember) async throws {
        try await pool.write { db in
            try db.execute(sql: """
                INSERT INTO group_members (group_name, user_name, added_seq, seal) VALUES (?, ?, ?, ?)
                ON CONFLICT (group_name, user_name) DO UPDATE SET added_seq = excluded.added_seq, seal = excluded.seal
                """, arguments: [member.group, member.user, member.addedSeq, Data(self.credentialSeal.seal(member))])
        }
    }

    public func removeGroupMember(group: String, user: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM group_members WHERE group_name = ? AND user_name = ?", arguments: [group, user])
            return db.changesCount == 1
        }
    }

    public func groupMembers() async throws -> [GroupMember] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT group_name, user_name, added_seq, seal FROM group_members ORDER BY group_name, user_name")
                .compactMap { row in
                    let member = GroupMember(group: try row.decode(forColumn: "group_name"), user: try row.decode(forColumn: "user_name"),
                                             addedSeq: try row.decode(forColumn: "added_seq"))
                    let seal: Data? = try row.decode(forColumn: "seal")
                    return self.credentialSeal.matches(seal.map { [UInt8]($0) }, self.credentialSeal.seal(member)) ? member : nil
                }
        }
    }
}
