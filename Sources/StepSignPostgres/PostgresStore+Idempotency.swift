import Foundation
import PostgresNIO
import StepSignStorage

// The idempotencyKeys of signing requests (SPEC §3), shared by every daemon on the database.
// A claim is one transaction that first makes or locks the key's row (an insert that does
// nothing on a conflict, then `SELECT … FOR UPDATE`): two daemons racing for one key are
// ordered by the row lock, and exactly one of them claims it.
extension PostgresStore {
    public func claimIdempotencyKey(_ claim: IdempotencyClaim, now: Date) async throws -> IdempotencyOutcome {
        try await transaction { connection in
            try await connection.query("""
                DELETE FROM idempotency_keys WHERE peer_uid = \(claim.peerUID) AND key = \(claim.key) AND expires_at < \(now)
                """, logger: logger)
            let inserted = try await Self.count(connection.query("""
                INSERT INTO idempotency_keys (peer_uid, key, digest, signature_ids, done, pending_until, expires_at)
                VALUES (\(claim.peerUID), \(claim.key), \(claim.digest), \(claim.signatureIDs)::text[], false,
                        \(claim.pendingUntil), \(claim.expiresAt))
                ON CONFLICT (peer_uid, key) DO NOTHING RETURNING 1
                """, logger: logger))
            if inserted == 1 {
                try await pruneIdempotencyKeys(connection, now: now)
                return .claimed
            }
            let rows = try await connection.query("""
                SELECT digest, signature_ids, done, pending_until,
                       EXISTS (SELECT 1 FROM ledger WHERE signature_id = ANY (k.signature_ids))
                FROM idempotency_keys k WHERE peer_uid = \(claim.peerUID) AND key = \(claim.key) FOR UPDATE
                """, logger: logger)
            var found: (Data, [String], Bool, Date, Bool)?
            for try await row in rows {
                do { found = try row.decode((Data, [String], Bool, Date, Bool).self) } catch { throw Self.malformed("idempotency_keys", error) }
            }
            guard let (digest, ids, done, pendingUntil, signed) = found else {
                // Removed between the insert and the read (an expiry pruned by another
                // daemon): nothing holds the key, but a retry of the request claims it.
                return .inFlight
            }
            guard digest == claim.digest else { return .mismatch }
            if done { return .replay(signatureIDs: ids) }
            if signed {
                try await connection.query("""
                    UPDATE idempotency_keys SET done = true WHERE peer_uid = \(claim.peerUID) AND key = \(claim.key)
                    """, logger: logger)
                return .replay(signatureIDs: ids)
            }
            if pendingUntil > now { return .inFlight }
            // Its owner died before signing: the key is this request's now, under the same
            // signature IDs (the owner's late signing and this one cannot both land).
            try await connection.query("""
                UPDATE idempotency_keys SET done = false, pending_until = \(claim.pendingUntil), expires_at = \(claim.expiresAt)
                WHERE peer_uid = \(claim.peerUID) AND key = \(claim.key)
                """, logger: logger)
            return .takenOver(signatureIDs: ids)
        }
    }

    /// Forgets keys that expired before `now` (rows another transaction holds are left for later).
    private func pruneIdempotencyKeys(_ connection: AnsweredConnection, now: Date) async throws {
        try await connection.query("""
            DELETE FROM idempotency_keys WHERE (peer_uid, key) IN (
                SELECT peer_uid, key FROM idempotency_keys WHERE expires_at < \(now) LIMIT 100 FOR UPDATE SKIP LOCKED)
            """, logger: logger)
    }

    public func completeIdempotencyKey(_ claim: IdempotencyClaim) async throws {
        try await withConnection { connection in
            try await connection.query("""
                UPDATE idempotency_keys SET done = true
                WHERE peer_uid = \(claim.peerUID) AND key = \(claim.key) AND signature_ids = \(claim.signatureIDs)::text[]
                """, logger: logger)
        }
    }

    @discardableResult
    public func releaseIdempotencyKey(_ claim: IdempotencyClaim) async throws -> Bool {
        try await withConnection { connection in
            try await Self.count(connection.query("""
                UPDATE idempotency_keys SET pending_until = '-infinity'
                WHERE peer_uid = \(claim.peerUID) AND key = \(claim.key) AND signature_ids = \(claim.signatureIDs)::text[]
                    AND NOT done AND NOT EXISTS (SELECT 1 FROM ledger WHERE signature_id = ANY (\(claim.signatureIDs)::text[]))
                RETURNING 1
                """, logger: logger)) == 1
        }
    }
}
