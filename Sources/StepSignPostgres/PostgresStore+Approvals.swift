import Foundation
import PostgresNIO
import StepSignStorage

// Requests waiting for approval by several people, and user groups (SPEC §3.4): one table
// for every daemon on the database, so a request made on one is approved on another.
extension PostgresStore {
    static let approvalColumns = """
        id, requester, payload, payload_length, reason, auth_level, auth_type, authenticator_used, peer_uid, peer_pid,
        peer_comm, approvers, required, approver_level, approver_type, rule_key, created_at, expires_at, seal, state,
        signature_id, decided_by, decision_reason, decided_at
        """

    /// A request row as stored (votes not read), and its seal.
    static func decodeApproval(_ row: PostgresRow) throws -> (ApprovalRecord, [UInt8]) {
        do {
            let columns = row.makeRandomAccess()
            let approvers = try columns["approvers"].decode(String.self)
            guard let state = ApprovalState(rawValue: try columns["state"].decode(String.self)),
                  let uid = UInt32(exactly: try columns["peer_uid"].decode(Int64.self)) else {
                throw StorageError.malformedRow(table: "approvals", detail: "state or peer_uid")
            }
            let record = ApprovalRecord(
                id: try columns["id"].decode(String.self), requester: try columns["requester"].decode(String.self),
                payload: try columns["payload"].decode(String.self), payloadLength: try columns["payload_length"].decode(Int.self),
                reason: try columns["reason"].decode(String.self), authLevel: try columns["auth_level"].decode(Int.self),
                authenticatorType: try columns["auth_type"].decode(Int.self),
                authenticatorUsed: try columns["authenticator_used"].decode(String.self),
                peer: LedgerPeer(uid: uid, pid: try columns["peer_pid"].decode(Int32.self), comm: try columns["peer_comm"].decode(String.self)),
                rule: ApprovalRuleSnapshot(approvers: approvers.split(separator: "\n").map(String.init),
                                           required: try columns["required"].decode(Int.self),
                                           level: try columns["approver_level"].decode(Int.self),
                                           type: try columns["approver_type"].decode(Int.self),
                                           key: try columns["rule_key"].decode(String.self)),
                createdAt: try columns["created_at"].decode(Date.self), expiresAt: try columns["expires_at"].decode(Date.self),
                state: state, signatureID: try columns["signature_id"].decode(String?.self),
                decidedBy: try columns["decided_by"].decode(String?.self),
                decisionReason: try columns["decision_reason"].decode(String?.self),
                decidedAt: try columns["decided_at"].decode(Date?.self))
            return (record, [UInt8](try columns["seal"].decode(Data.self)))
        } catch let error as StorageError {
            throw error
        } catch {
            throw malformed("approvals", error)
        }
    }

    /// `row`'s request with its votes whose seals check; nil when its own seal does not.
    private func checked(_ connection: AnsweredConnection, _ row: PostgresRow) async throws -> ApprovalRecord? {
        var (record, seal) = try Self.decodeApproval(row)
        guard credentialSeal.matches(seal, credentialSeal.seal(record)) else { return nil }
        let votes = try await connection.query("""
            SELECT approver, auth_level, authenticator, at, seal FROM approval_votes WHERE approval_id = \(record.id) ORDER BY at, approver
            """, logger: logger)
        for try await vote in votes {
            let (approver, level, authenticator, at, voteSeal): (String, Int, String, Date, Data)
            do { (approver, level, authenticator, at, voteSeal) = try vote.decode((String, Int, String, Date, Data).self) } catch {
                throw Self.malformed("approval_votes", error)
            }
            let decoded = ApprovalVote(approver: approver, authLevel: level, authenticator: authenticator, at: at)
            if credentialSeal.matches([UInt8](voteSeal), credentialSeal.seal(decoded, approvalID: record.id)) {
                record.votes.append(decoded)
            }
        }
        return record
    }

    private func checkedApproval(_ connection: AnsweredConnection, _ id: String, lock: Bool) async throws -> ApprovalRecord? {
        let rows = try await connection.query(
            lock ? "SELECT \(unescaped: Self.approvalColumns) FROM approvals WHERE id = \(id) FOR UPDATE"
                 : "SELECT \(unescaped: Self.approvalColumns) FROM approvals WHERE id = \(id)", logger: logger)
        var found: PostgresRow?
        for try await row in rows { found = row }
        guard let found else { return nil }
        return try await checked(connection, found)
    }

    public func createApproval(_ record: ApprovalRecord) async throws {
        // Sealed with its times as the server keeps them (whole microseconds), so the seal
        // checks against what is read back.
        var record = record
        record.createdAt = record.createdAt.postgresRounded
        record.expiresAt = record.expiresAt.postgresRounded
        let seal = Data(credentialSeal.seal(record))
        let approvers = record.rule.approvers.joined(separator: "\n")
        _ = try await inTransaction { connection in
            try await connection.query("""
                INSERT INTO approvals (\(unescaped: Self.approvalColumns)) VALUES (
                    \(record.id), \(record.requester), \(record.payload), \(record.payloadLength), \(record.reason),
                    \(record.authLevel), \(record.authenticatorType), \(record.authenticatorUsed), \(Int64(record.peer.uid)),
                    \(record.peer.pid), \(record.peer.comm), \(approvers), \(record.rule.required), \(record.rule.level),
                    \(record.rule.type), \(record.rule.key), \(record.createdAt), \(record.expiresAt), \(seal),
                    \(record.state.rawValue), \(record.signatureID), \(record.decidedBy), \(record.decisionReason), \(record.decidedAt))
                """, logger: logger)
        }
    }

    public func approval(id: String) async throws -> ApprovalRecord? {
        try await inSnapshot { connection in try await checkedApproval(connection, id, lock: false) }
    }

    public func pendingApprovals() async throws -> [ApprovalRecord] {
        try await inSnapshot { connection in
            let rows = try await connection.query("""
                SELECT \(unescaped: Self.approvalColumns) FROM approvals WHERE state = 'pending' ORDER BY created_at, id
                """, logger: logger)
            var collected: [PostgresRow] = []
            for try await row in rows { collected.append(row) }
            var records: [ApprovalRecord] = []
            for row in collected {
                if let record = try await checked(connection, row) { records.append(record) }
            }
            return records
        }
    }

    public func addApprovalVote(id: String, vote: ApprovalVote, reserving signatureID: String, now: Date) async throws -> ApprovalVoteOutcome {
        var vote = vote
        vote.at = vote.at.postgresRounded
        let voteSeal = Data(credentialSeal.seal(vote, approvalID: id))
        return try await inTransaction { connection in
            // The request's row is held (FOR UPDATE): two approvers' last votes take turns, so
            // the approvals complete once.
            guard let record = try await checkedApproval(connection, id, lock: true) else { return .unknown }
            let completes: Bool
            switch ApprovalVoteRule.step(for: vote, on: record, now: now) {
            case let .refuse(outcome): return outcome
            case let .insert(completesIt): completes = completesIt
            }
            let inserted = try await Self.count(connection.query("""
                INSERT INTO approval_votes (approval_id, approver, auth_level, authenticator, at, seal)
                VALUES (\(id), \(vote.approver), \(vote.authLevel), \(vote.authenticator), \(vote.at), \(voteSeal))
                ON CONFLICT (approval_id, approver) DO NOTHING RETURNING 1
                """, logger: logger))
            // A row whose seal failed is not counted, and not replaced either.
            guard inserted == 1 else { return .alreadyApproved }
            if completes {
                try await connection.query("""
                    UPDATE approvals SET state = 'approved', signature_id = \(signatureID), decided_at = \(now) WHERE id = \(id)
                    """, logger: logger)
            }
            return ApprovalVoteRule.outcome(of: record, adding: vote, completes: completes, signatureID: signatureID, now: now)
        }
    }

    public func endApproval(id: String, as state: ApprovalState, by: String?, reason: String, now: Date) async throws -> Bool {
        try await inTransaction { connection in
            try await Self.count(connection.query("""
                UPDATE approvals SET state = \(state.rawValue), decided_by = \(by), decision_reason = \(reason), decided_at = \(now)
                WHERE id = \(id) AND state = 'pending' RETURNING 1
                """, logger: logger)) == 1
        }
    }

    public func expireApprovals(now: Date) async throws -> [ApprovalRecord] {
        try await inTransaction { connection in
            // SKIP LOCKED: a request another daemon is expiring (or an approver is voting on)
            // is left to it; each is ended once.
            let rows = try await connection.query("""
                SELECT \(unescaped: Self.approvalColumns) FROM approvals WHERE state = 'pending' AND expires_at <= \(now)
                ORDER BY expires_at, id FOR UPDATE SKIP LOCKED
                """, logger: logger)
            var collected: [PostgresRow] = []
            for try await row in rows { collected.append(row) }
            var expired: [ApprovalRecord] = []
            for row in collected {
                let (record, _) = try Self.decodeApproval(row)
                try await connection.query("""
                    UPDATE approvals SET state = 'expired', decision_reason = 'timeout', decided_at = \(now) WHERE id = \(record.id)
                    """, logger: logger)
                if var checked = try await checked(connection, row) {
                    checked.state = .expired
                    expired.append(checked)
                }
            }
            return expired
        }
    }

    public func markApprovalSigned(id: String, signatureID: String) async throws -> Bool {
        try await inTransaction { connection in
            try await Self.count(connection.query("""
                UPDATE approvals SET state = 'signed', signature_id = \(signatureID) WHERE id = \(id) AND state = 'approved'
                RETURNING 1
                """, logger: logger)) == 1
        }
    }

    public func addGroupMember(_ member: GroupMember) async throws {
        let seal = Data(credentialSeal.seal(member))
        _ = try await inTransaction { connection in
            try await connection.query("""
                INSERT INTO group_members (group_name, user_name, added_seq, seal) VALUES (\(member.group), \(member.user), \(member.addedSeq), \(seal))
                ON CONFLICT (group_name, user_name) DO UPDATE SET added_seq = excluded.added_seq, seal = excluded.seal
                """, logger: logger)
        }
    }

    public func removeGroupMember(group: String, user: String) async throws -> Bool {
        try await inTransaction { connection in
            try await Self.count(connection.query("""
                DELETE FROM group_members WHERE group_name = \(group) AND user_name = \(user) RETURNING 1
                """, logger: logger)) == 1
        }
    }

    public func groupMembers() async throws -> [GroupMember] {
        try await inSnapshot { connection in
            let rows = try await connection.query("""
                SELECT group_name, user_name, added_seq, seal FROM group_members ORDER BY group_name, user_name
                """, logger: logger)
            var members: [GroupMember] = []
            for try await row in rows {
                let (group, user, addedSeq, seal): (String, String, Int64, Data)
                do { (group, user, addedSeq, seal) = try row.decode((String, String, Int64, Data).self) } catch {
                    throw Self.malformed("group_members", error)
                }
                let member = GroupMember(group: group, user: user, addedSeq: addedSeq)
                if credentialSeal.matches([UInt8](seal), credentialSeal.seal(member)) { members.append(member) }
            }
            return members
        }
    }
}
