import Foundation
import PostgresNIO
import StepSignStorage

// What approval by several people rests on (SPEC §3.4) and the idempotencyKeys of signing
// requests (SPEC §3), for `stepsign admin migrate` (issue 14). The sealed rows are sealed
// again under the target's key only when the caller says they passed their check under the
// source's; the others are written with no valid seal, so they fail on PostgreSQL as they did
// in the source (never acted on, never valid).
extension PostgresImport {
    /// Group memberships, each sealed under the target's key when `sealed` (it checked in the
    /// source), else with an empty seal (it does not hold).
    public func insertGroupMembers(_ members: [(member: GroupMember, sealed: Bool)]) async throws {
        try await insert(members, into: "group_members", columns: "group_name, user_name, added_seq, seal", count: 4) { bindings, row in
            bindings.append(row.member.group)
            bindings.append(row.member.user)
            bindings.append(row.member.addedSeq)
            try bindings.append(row.sealed ? Data(seal.seal(row.member)) : Data())
        }
    }

    /// Every stored group membership, by group and user (byte order), and whether its seal
    /// checks under the target's key.
    public func groupMembers() async throws -> [(member: GroupMember, sealed: Bool)] {
        let rows = try await connection.query("""
            SELECT group_name, user_name, added_seq, seal FROM group_members ORDER BY group_name COLLATE "C", user_name COLLATE "C"
            """, logger: logger)
        var members: [(member: GroupMember, sealed: Bool)] = []
        for try await row in rows {
            let (group, user, addedSeq, stored): (String, String, Int64, Data)
            do { (group, user, addedSeq, stored) = try row.decode((String, String, Int64, Data).self) } catch {
                throw PostgresStore.malformed("group_members", error)
            }
            let member = GroupMember(group: group, user: user, addedSeq: addedSeq)
            members.append((member, seal.matches([UInt8](stored), seal.seal(member))))
        }
        return members
    }

    /// Requests for approval with every vote row stored for them (`votes`, by request ID), as
    /// they are (times in whole microseconds, as PostgreSQL keeps them). A request in `sound`
    /// (it passed its check in the source) gets its fixed seal under the target's key, and so
    /// does each of its votes whose own seal checked (`sealed`); the others get empty seals.
    /// No state seal yet: ``sealApprovals(_:)`` binds them once the ledger and
    /// ``insertApprovalEvents(_:)`` are in.
    public func insertApprovals(_ records: [ApprovalRecord], votes: [String: [(vote: ApprovalVote, sealed: Bool)]],
                                sound: Set<String>) async throws {
        for record in records {
            var record = record
            record.createdAt = record.createdAt.postgresRounded
            record.expiresAt = record.expiresAt.postgresRounded
            record.decidedAt = record.decidedAt?.postgresRounded
            let fixedSeal = sound.contains(record.id) ? Data(seal.seal(record)) : Data()
            let approvers = record.rule.approvers.joined(separator: "\n")
            try await connection.query("""
                INSERT INTO approvals (\(unescaped: PostgresStore.approvalColumns)) VALUES (
                    \(record.id), \(record.requester), \(record.payload), \(record.payloadLength), \(record.reason),
                    \(record.authLevel), \(record.authenticatorType), \(record.authenticatorUsed), \(Int64(record.peer.uid)),
                    \(record.peer.pid), \(record.peer.comm), \(approvers), \(record.rule.required), \(record.rule.level),
                    \(record.rule.type), \(record.rule.key), \(record.createdAt), \(record.expiresAt), \(fixedSeal),
                    \(record.state.rawValue), \(record.signatureID), \(record.decidedBy), \(record.decisionReason), \(record.decidedAt))
                """, logger: logger)
            for (vote, sealed) in votes[record.id] ?? [] {
                var vote = vote
                vote.at = vote.at.postgresRounded
                let voteSeal = sound.contains(record.id) && sealed ? Data(seal.seal(vote, approvalID: record.id)) : Data()
                try await connection.query("""
                    INSERT INTO approval_votes (approval_id, approver, auth_level, authenticator, at, seal)
                    VALUES (\(record.id), \(vote.approver), \(vote.authLevel), \(vote.authenticator), \(vote.at), \(voteSeal))
                    """, logger: logger)
            }
        }
    }

    /// The log's index of events that name a request, as the source kept it.
    public func insertApprovalEvents(_ events: [ApprovalEventIndex]) async throws {
        try await insert(events, into: "approval_events", columns: "approval_id, seq", count: 2) { bindings, event in
            bindings.append(event.approvalID)
            bindings.append(event.seq)
        }
    }

    /// Seals the state of each request in `ids` under the target's key, bound to its latest
    /// event in the copied index (as every change of a request does). Call it after
    /// ``insertApprovals(_:votes:sound:)`` and ``insertApprovalEvents(_:)``, with the requests
    /// that passed their check in the source only.
    public func sealApprovals(_ ids: [String]) async throws {
        for id in ids { try await PostgresStore.resealApproval(connection, id, seal: seal, logger: logger) }
    }

    /// Every request, checked under the target's key as the store checks it (votes whose seals
    /// check, ``ApprovalRecord/sealFailure``), by creation time and ID.
    public func approvals() async throws -> [ApprovalRecord] {
        let rows = try await connection.query("""
            SELECT \(unescaped: PostgresStore.approvalSelect) FROM approvals ORDER BY created_at, id
            """, logger: logger)
        var collected: [PostgresRow] = []
        for try await row in rows { collected.append(row) }
        var records: [ApprovalRecord] = []
        for row in collected { records.append(try await PostgresStore.checked(connection, row, seal: seal, logger: logger)) }
        return records
    }

    /// Every vote row stored for request `id`, whatever its seal.
    public func storedVotes(of id: String) async throws -> [ApprovalVote] {
        try await PostgresStore.storedVotes(connection, id, logger: logger).map(\.0)
    }

    /// The index of events that name a request, by request ID (byte order) and seq.
    public func approvalEvents() async throws -> [ApprovalEventIndex] {
        let rows = try await connection.query("""
            SELECT approval_id, seq FROM approval_events ORDER BY approval_id COLLATE "C", seq
            """, logger: logger)
        var events: [ApprovalEventIndex] = []
        for try await row in rows {
            do {
                let (id, seq) = try row.decode((String, Int64).self)
                events.append(ApprovalEventIndex(approvalID: id, seq: seq))
            } catch {
                throw PostgresStore.malformed("approval_events", error)
            }
        }
        return events
    }

    /// `idempotencyKey`s as they are. Give times PostgreSQL can hold: a claim given up in
    /// SQLite is pending until -1e300 seconds, which the caller makes `Date.distantPast`
    /// (as the store's `-infinity`, before any now).
    public func insertIdempotencyKeys(_ keys: [IdempotencyKeyRecord]) async throws {
        try await insert(keys, into: "idempotency_keys",
                         columns: "peer_uid, key, digest, signature_ids, done, pending_until, expires_at", count: 7) { bindings, key in
            bindings.append(key.peerUID)
            bindings.append(key.key)
            try bindings.append(key.digest)
            bindings.append(key.signatureIDs)
            bindings.append(key.done)
            bindings.append(key.pendingUntil)
            bindings.append(key.expiresAt)
        }
    }

    /// Every stored `idempotencyKey`, by peer uid and key (byte order).
    public func idempotencyKeys() async throws -> [IdempotencyKeyRecord] {
        let rows = try await connection.query("""
            SELECT peer_uid, key, digest, signature_ids, done, pending_until, expires_at FROM idempotency_keys
            ORDER BY peer_uid, key COLLATE "C"
            """, logger: logger)
        var keys: [IdempotencyKeyRecord] = []
        for try await row in rows {
            do {
                let (uid, key, digest, ids, done, pendingUntil, expiresAt) =
                    try row.decode((Int64, String, Data, [String], Bool, Date, Date).self)
                keys.append(IdempotencyKeyRecord(peerUID: uid, key: key, digest: digest, signatureIDs: ids, done: done,
                                                 pendingUntil: pendingUntil, expiresAt: expiresAt))
            } catch {
                throw PostgresStore.malformed("idempotency_keys", error)
            }
        }
        return keys
    }
}
