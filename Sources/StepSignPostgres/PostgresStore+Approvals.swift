import Foundation
import Logging
import PostgresNIO
import StepSignFormat
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

    /// The columns of a checked read: the request, its state seal and the log index of its
    /// latest event.
    static let approvalSelect = """
        \(approvalColumns), event_index, state_seal,
        (SELECT max(seq) FROM approval_events WHERE approval_id = approvals.id) AS latest_event
        """

    /// `row`'s request (selected with ``approvalSelect``) with its votes whose own seals check,
    /// and its check against both seals and the log.
    private func checked(_ connection: AnsweredConnection, _ row: PostgresRow) async throws -> ApprovalRecord {
        try await Self.checked(connection, row, seal: credentialSeal, logger: logger)
    }

    /// `row`'s request checked under `credentialSeal` (also the import's read back, which has
    /// no store instance).
    static func checked(_ connection: AnsweredConnection, _ row: PostgresRow, seal credentialSeal: CredentialSeal,
                        logger: Logger) async throws -> ApprovalRecord {
        var (record, seal) = try Self.decodeApproval(row)
        let stored = try await Self.storedVotes(connection, record.id, logger: logger)
        for (vote, voteSeal) in stored where credentialSeal.matches(voteSeal, credentialSeal.seal(vote, approvalID: record.id)) {
            record.votes.append(vote)
        }
        let columns = row.makeRandomAccess()
        let stateSeal: Data?, eventIndex: Int64?, latest: Int64?
        do {
            stateSeal = try columns["state_seal"].decode(Data?.self)
            eventIndex = try columns["event_index"].decode(Int64?.self)
            latest = try columns["latest_event"].decode(Int64?.self)
        } catch {
            throw Self.malformed("approvals", error)
        }
        record.sealFailure = credentialSeal.failure(of: record, seal: seal, stateSeal: stateSeal.map { [UInt8]($0) },
                                                    eventIndex: eventIndex, storedVotes: stored.map(\.0),
                                                    latestEventIndex: latest.map { $0 - 1 } ?? SealBinding.noEvent)
        return record
    }

    /// Every vote row of request `id` as stored, with its seal.
    static func storedVotes(_ connection: AnsweredConnection, _ id: String, logger: Logger) async throws
        -> [(ApprovalVote, [UInt8])] {
        let rows = try await connection.query("""
            SELECT approver, auth_level, authenticator, at, seal FROM approval_votes WHERE approval_id = \(id)
            ORDER BY at, approver COLLATE "C"
            """, logger: logger)
        var votes: [(ApprovalVote, [UInt8])] = []
        for try await vote in rows {
            let (approver, level, authenticator, at, voteSeal): (String, Int, String, Date, Data)
            do { (approver, level, authenticator, at, voteSeal) = try vote.decode((String, Int, String, Date, Data).self) } catch {
                throw Self.malformed("approval_votes", error)
            }
            votes.append((ApprovalVote(approver: approver, authLevel: level, authenticator: authenticator, at: at), [UInt8](voteSeal)))
        }
        return votes
    }

    private func checkedApproval(_ connection: AnsweredConnection, _ id: String, lock: Bool) async throws -> ApprovalRecord? {
        if lock {
            // The request's row is held (FOR UPDATE) for the rest of the transaction: changes
            // of one request take turns, so two approvers' last votes complete it once.
            try await connection.query("SELECT 1 FROM approvals WHERE id = \(id) FOR UPDATE", logger: logger)
        }
        let rows = try await connection.query(
            "SELECT \(unescaped: Self.approvalSelect) FROM approvals WHERE id = \(id)", logger: logger)
        var found: PostgresRow?
        for try await row in rows { found = row }
        guard let found else { return nil }
        return try await checked(connection, found)
    }

    /// The request `id`, locked, checked and sound, for a change in this transaction; else throws
    /// ``StorageError/approvalSealBroken(id:_:)``. Nil when absent.
    private func soundApproval(_ connection: AnsweredConnection, _ id: String) async throws -> ApprovalRecord? {
        guard let record = try await checkedApproval(connection, id, lock: true) else { return nil }
        if let failure = record.sealFailure { throw StorageError.approvalSealBroken(id: id, failure) }
        return record
    }

    /// Seals request `id`'s state as stored now, bound to its latest event in the log. Call only
    /// on a request that passed its check in the same transaction, after changing it.
    static func resealApproval(_ connection: AnsweredConnection, _ id: String, seal: CredentialSeal, logger: Logger) async throws {
        let rows = try await connection.query(
            "SELECT \(unescaped: approvalSelect) FROM approvals WHERE id = \(id)", logger: logger)
        var found: PostgresRow?
        for try await row in rows { found = row }
        guard let found else { return }
        let (record, _) = try decodeApproval(found)
        let latest: Int64
        do { latest = (try found.makeRandomAccess()["latest_event"].decode(Int64?.self)).map { $0 - 1 } ?? SealBinding.noEvent } catch {
            throw malformed("approvals", error)
        }
        let votes = try await storedVotes(connection, id, logger: logger).map(\.0)
        let stateSeal = Data(seal.sealState(of: record, votes: votes, eventIndex: latest))
        try await connection.query("""
            UPDATE approvals SET event_index = \(latest), state_seal = \(stateSeal) WHERE id = \(id)
            """, logger: logger)
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
            try await Self.resealApproval(connection, record.id, seal: credentialSeal, logger: logger)
        }
    }

    public func approval(id: String) async throws -> ApprovalRecord? {
        try await inSnapshot { connection in try await checkedApproval(connection, id, lock: false) }
    }

    public func pendingApprovals() async throws -> [ApprovalRecord] {
        try await approvals(where: "WHERE state = 'pending'")
    }

    public func allApprovals() async throws -> [ApprovalRecord] {
        try await approvals(where: "")
    }

    private func approvals(where condition: String) async throws -> [ApprovalRecord] {
        try await inSnapshot { connection in
            let rows = try await connection.query("""
                SELECT \(unescaped: Self.approvalSelect) FROM approvals \(unescaped: condition) ORDER BY created_at, id
                """, logger: logger)
            var collected: [PostgresRow] = []
            for try await row in rows { collected.append(row) }
            var records: [ApprovalRecord] = []
            for row in collected { records.append(try await checked(connection, row)) }
            return records
        }
    }

    public func addApprovalVote(id: String, vote: ApprovalVote, now: Date) async throws -> ApprovalVoteOutcome {
        var vote = vote
        vote.at = vote.at.postgresRounded
        let voteSeal = Data(credentialSeal.seal(vote, approvalID: id))
        return try await inTransaction { connection in
            guard let record = try await checkedApproval(connection, id, lock: true) else { return .unknown }
            if case let .refuse(outcome) = ApprovalVoteRule.step(for: vote, on: record, now: now) { return outcome }
            // Byte-wise (the primary key's equality is the bytes'): an NFD twin of an approver
            // is another approver, who has to be one in their own right.
            let inserted = try await Self.count(connection.query("""
                INSERT INTO approval_votes (approval_id, approver, auth_level, authenticator, at, seal)
                VALUES (\(id), \(vote.approver), \(vote.authLevel), \(vote.authenticator), \(vote.at), \(voteSeal))
                ON CONFLICT (approval_id, approver) DO NOTHING RETURNING 1
                """, logger: logger))
            guard inserted == 1 else { return .alreadyApproved }
            try await Self.resealApproval(connection, id, seal: credentialSeal, logger: logger)
            var counted = record
            counted.votes.append(vote)
            return .counted(counted)
        }
    }

    public func completeApproval(id: String, voters: [String], qualified: [String], reserving signatureID: String,
                                 now: Date) async throws -> ApprovalCompletion {
        let now = now.postgresRounded
        return try await inTransaction { connection in
            guard let record = try await checkedApproval(connection, id, lock: true) else { return .unknown }
            let stored = try await Self.storedVotes(connection, id, logger: logger).map(\.0.approver)
            switch ApprovalVoteRule.completion(of: record, storedVoters: stored, voters: voters, qualified: qualified) {
            case let .refuse(outcome):
                return outcome
            case let .apply(drop, approves):
                for approver in drop {
                    try await connection.query("""
                        DELETE FROM approval_votes WHERE approval_id = \(id) AND approver = \(approver)
                        """, logger: logger)
                }
                if approves {
                    try await connection.query("""
                        UPDATE approvals SET state = 'approved', signature_id = \(signatureID), decided_at = \(now) WHERE id = \(id)
                        """, logger: logger)
                }
                if approves || !drop.isEmpty { try await Self.resealApproval(connection, id, seal: credentialSeal, logger: logger) }
                return ApprovalVoteRule.outcome(of: record, dropping: drop, approves: approves, signatureID: signatureID, now: now)
            }
        }
    }

    public func endApproval(id: String, as state: ApprovalState, by: String?, reason: String, now: Date) async throws -> Bool {
        try await inTransaction { connection in
            guard try await soundApproval(connection, id)?.state == .pending else { return false }
            try await connection.query("""
                UPDATE approvals SET state = \(state.rawValue), decided_by = \(by), decision_reason = \(reason), decided_at = \(now)
                WHERE id = \(id)
                """, logger: logger)
            try await Self.resealApproval(connection, id, seal: credentialSeal, logger: logger)
            return true
        }
    }

    public func expireApprovals(now: Date) async throws -> [ApprovalRecord] {
        try await inTransaction { connection in
            // SKIP LOCKED: a request another daemon is expiring (or an approver is voting on)
            // is left to it; each is ended once.
            let ids = try await connection.query("""
                SELECT id FROM approvals WHERE state = 'pending' AND expires_at <= \(now)
                ORDER BY expires_at, id FOR UPDATE SKIP LOCKED
                """, logger: logger)
            var collected: [String] = []
            for try await id in ids.decode(String.self) { collected.append(id) }
            var expired: [ApprovalRecord] = []
            for id in collected {
                guard var record = try await checkedApproval(connection, id, lock: false),
                      record.sealFailure == nil else { continue } // never acted on, not even ended
                try await connection.query("""
                    UPDATE approvals SET state = 'expired', decision_reason = 'timeout', decided_at = \(now) WHERE id = \(id)
                    """, logger: logger)
                try await Self.resealApproval(connection, id, seal: credentialSeal, logger: logger)
                record.state = .expired
                expired.append(record)
            }
            return expired
        }
    }

    public func markApprovalSigned(id: String, signatureID: String) async throws -> Bool {
        try await inTransaction { connection in
            guard try await soundApproval(connection, id)?.state == .approved else { return false }
            try await connection.query("""
                UPDATE approvals SET state = 'signed', signature_id = \(signatureID) WHERE id = \(id)
                """, logger: logger)
            try await Self.resealApproval(connection, id, seal: credentialSeal, logger: logger)
            return true
        }
    }

    // MARK: Binding to the log

    /// Indexes the events of `batch` (appended from `firstSeq` on) that name a request, and seals
    /// again, bound to their new latest event, the requests that passed their check against the
    /// log as it was before the batch. A request that fails stays as it is.
    func bindApprovals(of batch: [LedgerAppend], firstSeq: Int64, _ connection: AnsweredConnection) async throws {
        let ids = LedgerAppend.approvalsNamedByEvents(batch)
        guard !ids.isEmpty else { return }
        var sound: [String] = []
        for id in ids {
            if let record = try await checkedApproval(connection, id, lock: true), record.sealFailure == nil { sound.append(id) }
        }
        for (offset, item) in batch.enumerated() where item.authLevel < 0 {
            guard let id = item.approvalID else { continue }
            try await connection.query("""
                INSERT INTO approval_events (approval_id, seq) VALUES (\(id), \(firstSeq + Int64(offset))) ON CONFLICT DO NOTHING
                """, logger: logger)
        }
        for id in sound { try await Self.resealApproval(connection, id, seal: credentialSeal, logger: logger) }
    }

    /// The upgrade (schema v13): every event already in the ledger that names a request is
    /// indexed in `approval_events`. Its claims are read unverified: this only indexes, and
    /// `admin.auditVerify` verifies every entry.
    static func indexApprovalEvents(_ connection: AnsweredConnection, logger: Logger) async throws {
        let rows = try await connection.query("SELECT seq, jws FROM ledger WHERE auth_level < 0 ORDER BY seq", logger: logger)
        var found: [(String, Int64)] = []
        for try await (seq, jws) in rows.decode((Int64, String).self) {
            if let id = LedgerEvent.unverifiedClaims(jws)?.detail("approvalID") { found.append((id, seq)) }
        }
        for (id, seq) in found {
            try await connection.query("""
                INSERT INTO approval_events (approval_id, seq) VALUES (\(id), \(seq)) ON CONFLICT DO NOTHING
                """, logger: logger)
        }
    }

    /// Seals, once, the state of every request stored before state seals existed (the upgrade),
    /// bound to its latest event; those whose fixed seal fails are left unsealed. In the
    /// migrator's transaction, under its lock. Afterwards a request without a state seal is
    /// never sealed: it fails as ``SealFailure/missing``.
    static func prepareApprovalSeals(_ seal: CredentialSeal, on connection: AnsweredConnection, logger: Logger) async throws {
        let marked = try await connection.query(
            "SELECT value FROM store_secrets WHERE name = 'approval_state_seals'", logger: logger
        ).decode(Data.self).first { _ in true }
        guard marked == nil else { return }
        let rows = try await connection.query(
            "SELECT \(unescaped: approvalColumns) FROM approvals WHERE state_seal IS NULL", logger: logger)
        var unsealed: [ApprovalRecord] = []
        for try await row in rows {
            let (record, fixedSeal) = try decodeApproval(row)
            if seal.matches(fixedSeal, seal.seal(record)) { unsealed.append(record) }
        }
        for record in unsealed { try await resealApproval(connection, record.id, seal: seal, logger: logger) }
        do {
            try await connection.query(
                "INSERT INTO store_secrets (name, value) VALUES ('approval_state_seals', '\\x01'::bytea)", logger: logger)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == SQLState.insufficientPrivilege {
            throw PostgresStoreError.sealNotPermitted
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
