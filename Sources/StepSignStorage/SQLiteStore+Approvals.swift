import Foundation
import GRDB

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

    /// The request `id` in `db` with its votes whose seals check; nil when absent or its seal
    /// does not check.
    private func checkedApproval(_ db: Database, _ id: String) throws -> ApprovalRecord? {
        guard let row = try Row.fetchOne(db, sql: "SELECT \(Self.approvalColumns) FROM approvals WHERE id = ?", arguments: [id])
        else { return nil }
        return try checked(db, row)
    }

    private func checked(_ db: Database, _ row: Row) throws -> ApprovalRecord? {
        var (record, seal) = try Self.decodeApproval(row)
        guard credentialSeal.matches(seal, credentialSeal.seal(record)) else { return nil }
        let votes = try Row.fetchAll(db, sql: """
            SELECT approver, auth_level, authenticator, at, seal FROM approval_votes WHERE approval_id = ? ORDER BY at, rowid
            """, arguments: [record.id])
        for vote in votes {
            let decoded = ApprovalVote(approver: try vote.decode(forColumn: "approver"), authLevel: try vote.decode(forColumn: "auth_level"),
                                       authenticator: try vote.decode(forColumn: "authenticator"),
                                       at: Date(storageSeconds: try vote.decode(forColumn: "at")))
            let voteSeal: Data? = try vote.decode(forColumn: "seal")
            if credentialSeal.matches(voteSeal.map { [UInt8]($0) }, credentialSeal.seal(decoded, approvalID: record.id)) {
                record.votes.append(decoded)
            }
        }
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
        }
    }

    public func approval(id: String) async throws -> ApprovalRecord? {
        try await pool.read { db in try self.checkedApproval(db, id) }
    }

    public func pendingApprovals() async throws -> [ApprovalRecord] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.approvalColumns) FROM approvals WHERE state = 'pending' ORDER BY created_at, id")
                .compactMap { try self.checked(db, $0) }
        }
    }

    public func addApprovalVote(id: String, vote: ApprovalVote, reserving signatureID: String, now: Date) async throws -> ApprovalVoteOutcome {
        try await pool.write { db in
            guard let record = try self.checkedApproval(db, id) else { return .unknown }
            let completes: Bool
            switch ApprovalVoteRule.step(for: vote, on: record, now: now) {
            case let .refuse(outcome): return outcome
            case let .insert(completesIt): completes = completesIt
            }
            let taken = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM approval_votes WHERE approval_id = ? AND approver = ?)",
                                          arguments: [id, vote.approver]) ?? false
            // A row whose seal failed is not counted, and not replaced either.
            guard !taken else { return .alreadyApproved }
            try db.execute(sql: """
                INSERT INTO approval_votes (approval_id, approver, auth_level, authenticator, at, seal) VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [id, vote.approver, vote.authLevel, vote.authenticator, vote.at.storageSeconds,
                                 Data(self.credentialSeal.seal(vote, approvalID: id))])
            if completes {
                try db.execute(sql: "UPDATE approvals SET state = 'approved', signature_id = ?, decided_at = ? WHERE id = ?",
                               arguments: [signatureID, now.storageSeconds, id])
            }
            return ApprovalVoteRule.outcome(of: record, adding: vote, completes: completes, signatureID: signatureID, now: now)
        }
    }

    public func endApproval(id: String, as state: ApprovalState, by: String?, reason: String, now: Date) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: """
                UPDATE approvals SET state = ?, decided_by = ?, decision_reason = ?, decided_at = ? WHERE id = ? AND state = 'pending'
                """, arguments: [state.rawValue, by, reason, now.storageSeconds, id])
            return db.changesCount == 1
        }
    }

    public func expireApprovals(now: Date) async throws -> [ApprovalRecord] {
        try await pool.write { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT \(Self.approvalColumns) FROM approvals WHERE state = 'pending' AND expires_at <= ? ORDER BY expires_at, id
                """, arguments: [now.storageSeconds])
            var expired: [ApprovalRecord] = []
            for row in rows {
                let (record, _) = try Self.decodeApproval(row)
                try db.execute(sql: """
                    UPDATE approvals SET state = 'expired', decision_reason = 'timeout', decided_at = ? WHERE id = ?
                    """, arguments: [now.storageSeconds, record.id])
                if var checked = try self.checked(db, row) {
                    checked.state = .expired
                    expired.append(checked)
                }
            }
            return expired
        }
    }

    public func markApprovalSigned(id: String, signatureID: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "UPDATE approvals SET state = 'signed', signature_id = ? WHERE id = ? AND state = 'approved'",
                           arguments: [signatureID, id])
            return db.changesCount == 1
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
