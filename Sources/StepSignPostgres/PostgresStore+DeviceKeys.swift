import Foundation
import PostgresNIO
import StepSignStorage

// LDA device keys.
extension PostgresStore {
    static func decodeDeviceKey(_ row: PostgresRow) throws -> DeviceKeyRecord {
        do {
            let (kid, user, jwk, label, createdAt, revokedAt) = try row.decode((String, String, String, String, Date, Date?).self)
            return DeviceKeyRecord(kid: kid, user: user, publicKeyJWK: jwk, label: label, createdAt: createdAt, revokedAt: revokedAt)
        } catch {
            throw malformed("device_keys", error)
        }
    }

    public func addDeviceKey(_ key: DeviceKeyRecord) async throws {
        try await inTransaction { connection in
            // The user's row is held (FOR UPDATE) and checked: a concurrent removal waits, and
            // a record that fails its seal gets no key.
            guard try await lockSealed(connection, key.user) else { throw StorageError.noSuchUser(key.user) }
            let added = try await Self.count(connection.query("""
                INSERT INTO device_keys (kid, user_name, public_key_jwk, label, created_at, revoked_at)
                VALUES (\(key.kid), \(key.user), \(key.publicKeyJWK), \(key.label), \(key.createdAt), \(key.revokedAt))
                ON CONFLICT (kid) DO NOTHING RETURNING 1
                """, logger: logger))
            guard added == 1 else { throw StorageError.deviceKeyExists(key.kid) }
            try await Self.reseal(connection, key.user, seal: credentialSeal, logger: logger)
        }
    }

    public func deviceKeys(user: String, includeRevoked: Bool) async throws -> [DeviceKeyRecord] {
        try await inSnapshot { connection in
            // The keys of a record that fails its check are never used.
            guard let record = try await Self.checkedUser(connection, user, seal: credentialSeal, lock: false, logger: logger),
                  record.sealFailure == nil else { return [] }
            let rows = try await connection.query("""
                SELECT kid, user_name, public_key_jwk, label, created_at, revoked_at FROM device_keys
                WHERE user_name = \(user) AND (\(includeRevoked) OR revoked_at IS NULL) ORDER BY created_at, id
                """, logger: logger)
            var keys: [DeviceKeyRecord] = []
            for try await row in rows { keys.append(try Self.decodeDeviceKey(row)) }
            return keys
        }
    }

    public func revokeDeviceKey(user: String, kid: String, at: Date) async throws -> Bool {
        try await inTransaction { connection in
            guard try await lockSealed(connection, user) else { return false }
            let revoked = try await Self.count(connection.query("""
                UPDATE device_keys SET revoked_at = \(at) WHERE user_name = \(user) AND kid = \(kid) AND revoked_at IS NULL
                RETURNING 1
                """, logger: logger)) > 0
            if revoked { try await Self.reseal(connection, user, seal: credentialSeal, logger: logger) }
            return revoked
        }
    }
}
