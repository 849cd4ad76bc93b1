import Foundation
import GRDB

// The idempotencyKeys of signing requests (SPEC §3). Each method is one write transaction
// (`BEGIN IMMEDIATE` on the single writer): read, decide and write are one atomic step, and a
// claim is done as soon as one of its signature IDs is in the ledger.
extension SQLiteStore {
    public func claimIdempotencyKey(_ claim: IdempotencyClaim, now: Date) async throws -> IdempotencyOutcome {
        try await pool.write { db in
            try db.cachedStatement(sql: "DELETE FROM idempotency_keys WHERE expires_at < ?").execute(arguments: [now.storageSeconds])
            let row = try Row.fetchOne(
                db.cachedStatement(sql: """
                    SELECT digest, signature_ids, done, pending_until FROM idempotency_keys WHERE peer_uid = ? AND key = ?
                    """),
                arguments: [claim.peerUID, claim.key]
            )
            guard let row else {
                try Self.writeClaim(db, claim)
                return .claimed
            }
            let digest: Data, ids: [String], done: Bool, pendingUntil: Double
            do {
                digest = try row.decode(forColumn: "digest")
                ids = (try row.decode(String.self, forColumn: "signature_ids")).split(separator: " ").map(String.init)
                done = try row.decode(forColumn: "done")
                pendingUntil = try row.decode(forColumn: "pending_until")
            } catch {
                throw StorageError.malformedRow(table: "idempotency_keys", detail: "\(error)")
            }
            guard digest == claim.digest else { return .mismatch }
            if done { return .replay(signatureIDs: ids) }
            if try Self.anyInLedger(db, ids) {
                try db.cachedStatement(sql: "UPDATE idempotency_keys SET done = 1 WHERE peer_uid = ? AND key = ?")
                    .execute(arguments: [claim.peerUID, claim.key])
                return .replay(signatureIDs: ids)
            }
            if pendingUntil > now.storageSeconds { return .inFlight }
            // Its owner died before signing: the key is this request's now, under the same
            // signature IDs (the owner's late signing and this one cannot both land).
            try Self.writeClaim(db, claim.signing(under: ids))
            return .takenOver(signatureIDs: ids)
        }
    }

    public func completeIdempotencyKey(_ claim: IdempotencyClaim) async throws {
        try await pool.write { db in
            try db.cachedStatement(sql: "UPDATE idempotency_keys SET done = 1 WHERE peer_uid = ? AND key = ? AND signature_ids = ?")
                .execute(arguments: [claim.peerUID, claim.key, claim.signatureIDs.joined(separator: " ")])
        }
    }

    @discardableResult
    public func releaseIdempotencyKey(_ claim: IdempotencyClaim) async throws -> Bool {
        try await pool.write { db in
            guard try !Self.anyInLedger(db, claim.signatureIDs) else { return false }
            try db.cachedStatement(sql: """
                UPDATE idempotency_keys SET pending_until = -1e300 WHERE peer_uid = ? AND key = ? AND signature_ids = ? AND done = 0
                """)
                .execute(arguments: [claim.peerUID, claim.key, claim.signatureIDs.joined(separator: " ")])
            return db.changesCount > 0
        }
    }

    /// Writes `claim` as the pending claim of its key (over an expired pending one).
    static func writeClaim(_ db: Database, _ claim: IdempotencyClaim) throws {
        try db.cachedStatement(sql: """
            INSERT INTO idempotency_keys (peer_uid, key, digest, signature_ids, done, pending_until, expires_at)
            VALUES (?, ?, ?, ?, 0, ?, ?)
            ON CONFLICT (peer_uid, key) DO UPDATE SET digest = excluded.digest, signature_ids = excluded.signature_ids,
                done = 0, pending_until = excluded.pending_until, expires_at = excluded.expires_at
            """)
            .execute(arguments: [claim.peerUID, claim.key, claim.digest, claim.signatureIDs.joined(separator: " "),
                                 claim.pendingUntil.storageSeconds, claim.expiresAt.storageSeconds])
    }

    /// Whether any of `ids` is a signature ID in the ledger.
    static func anyInLedger(_ db: Database, _ ids: [String]) throws -> Bool {
        for id in ids {
            if try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM ledger WHERE signature_id = ?"), arguments: [id]) != nil {
                return true
            }
        }
        return false
    }
}
