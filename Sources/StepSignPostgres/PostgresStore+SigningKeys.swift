import Foundation
import PostgresNIO
import StepSignStorage

// Signing key metadata: the public halves of every daemon's keys (SPEC §5.2).
extension PostgresStore {
    public func signingKeys() async throws -> [SigningKeyRecord] {
        try await withConnection { connection in try await Self.signingKeys(on: connection, logger: logger) }
    }

    /// Every signing key record, oldest first, read on `connection`.
    static func signingKeys(on connection: AnsweredConnection, logger: Logger) async throws -> [SigningKeyRecord] {
        let rows = try await connection.query(
            "SELECT kid, created_at, active, revoked_at, instance, public_key, endorsement, revoked_index FROM signing_keys ORDER BY created_at, id", logger: logger
        )
        var keys: [SigningKeyRecord] = []
        for try await row in rows {
            do {
                let (kid, createdAt, active, revokedAt, instance, publicKey, endorsement, revokedIndex) =
                    try row.decode((String, Date, Bool, Date?, String, String?, String?, Int64?).self)
                keys.append(SigningKeyRecord(kid: kid, createdAt: createdAt, active: active, revokedAt: revokedAt,
                                             instance: instance, publicKeyPEM: publicKey, endorsement: endorsement,
                                             revokedIndex: revokedIndex))
            } catch {
                throw malformed("signing_keys", error)
            }
        }
        return keys
    }

    public func addSigningKey(kid: String, createdAt: Date, instance: String, publicKeyPEM: String?,
                              endorsement: String?) async throws {
        try await inTransaction { connection in
            // Rotations take turns (the one-active-per-instance index would refuse a second
            // daemon of the same instance; other instances' keys are not touched).
            try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.signingKeysLockKey))", logger: logger)
            guard try await Self.count(connection.query(
                "SELECT 1 FROM signing_keys WHERE kid = \(kid)", logger: logger
            )) == 0 else {
                throw StorageError.signingKeyExists(kid)
            }
            try await connection.query(
                "UPDATE signing_keys SET active = false WHERE active AND (instance = \(instance) OR instance = '')", logger: logger
            )
            try await connection.query("""
                INSERT INTO signing_keys (kid, created_at, active, instance, public_key, endorsement)
                VALUES (\(kid), \(createdAt), true, \(instance), \(publicKeyPEM), \(endorsement))
                """, logger: logger)
        }
    }

    public func recordSigningKeyPublicKey(kid: String, publicKeyPEM: String) async throws {
        _ = try await withConnection { connection in
            try await connection.query(
                "UPDATE signing_keys SET public_key = \(publicKeyPEM) WHERE kid = \(kid) AND public_key IS NULL", logger: logger
            )
        }
    }

    public func setSigningKeyEndorsement(kid: String, endorsement: String) async throws -> Bool {
        try await withConnection { connection in
            try await Self.count(connection.query(
                "UPDATE signing_keys SET endorsement = \(endorsement) WHERE kid = \(kid) RETURNING 1", logger: logger
            )) == 1
        }
    }

    public func revokeSigningKey(kid: String, at: Date, logIndex: Int64?) async throws -> Bool {
        try await withConnection { connection in
            let revoked = try await Self.count(connection.query("""
                UPDATE signing_keys SET revoked_at = \(at), revoked_index = \(logIndex), active = false
                WHERE kid = \(kid) AND revoked_at IS NULL RETURNING 1
                """, logger: logger)) == 1
            if !revoked, let logIndex {
                try await connection.query(
                    "UPDATE signing_keys SET revoked_index = \(logIndex) WHERE kid = \(kid) AND revoked_index IS NULL", logger: logger)
            }
            return revoked
        }
    }
}
