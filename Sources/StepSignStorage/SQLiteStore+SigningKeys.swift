import Foundation
import GRDB

// Signing key metadata.
extension SQLiteStore {
    public func signingKeys() async throws -> [SigningKeyRecord] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT kid, created_at, active, revoked_at, instance, public_key, endorsement, revoked_index FROM signing_keys ORDER BY created_at, rowid")
                .map { row in
                    do {
                        return SigningKeyRecord(
                            kid: try row.decode(forColumn: "kid"),
                            createdAt: Date(storageSeconds: try row.decode(forColumn: "created_at")),
                            active: try row.decode(forColumn: "active"),
                            revokedAt: try row.decode(Double?.self, forColumn: "revoked_at").map { Date(storageSeconds: $0) },
                            instance: try row.decode(forColumn: "instance"),
                            publicKeyPEM: try row.decode(String?.self, forColumn: "public_key"),
                            endorsement: try row.decode(String?.self, forColumn: "endorsement"),
                            revokedIndex: try row.decode(Int64?.self, forColumn: "revoked_index")
                        )
                    } catch {
                        throw StorageError.malformedRow(table: "signing_keys", detail: "\(error)")
                    }
                }
        }
    }

    public func addSigningKey(kid: String, createdAt: Date, instance: String, publicKeyPEM: String?,
                              endorsement: String?) async throws {
        try await pool.write { db in
            let known = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM signing_keys WHERE kid = ?)", arguments: [kid]
            ) ?? false
            guard !known else { throw StorageError.signingKeyExists(kid) }
            try db.execute(sql: "UPDATE signing_keys SET active = 0 WHERE active = 1 AND (instance = ? OR instance = '')",
                           arguments: [instance])
            try db.execute(
                sql: "INSERT INTO signing_keys (kid, created_at, active, instance, public_key, endorsement) VALUES (?, ?, 1, ?, ?, ?)",
                arguments: [kid, createdAt.storageSeconds, instance, publicKeyPEM, endorsement]
            )
        }
    }

    public func recordSigningKeyPublicKey(kid: String, publicKeyPEM: String) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE signing_keys SET public_key = ? WHERE kid = ? AND public_key IS NULL",
                           arguments: [publicKeyPEM, kid])
        }
    }

    public func setSigningKeyEndorsement(kid: String, endorsement: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "UPDATE signing_keys SET endorsement = ? WHERE kid = ?", arguments: [endorsement, kid])
            return db.changesCount == 1
        }
    }

    public func revokeSigningKey(kid: String, at: Date, logIndex: Int64?) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE signing_keys SET revoked_at = ?, revoked_index = ?, active = 0 WHERE kid = ? AND revoked_at IS NULL",
                arguments: [at.storageSeconds, logIndex, kid]
            )
            let revoked = db.changesCount == 1
            if !revoked, let logIndex {
                try db.execute(sql: "UPDATE signing_keys SET revoked_index = ? WHERE kid = ? AND revoked_index IS NULL",
                               arguments: [logIndex, kid])
            }
            return revoked
        }
    }
}
