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
        try await insertDeviceKey(key, fido2CredentialID: nil)
    }

    public func addFIDO2DeviceKey(_ key: DeviceKeyRecord, credentialID: String) async throws {
        try await insertDeviceKey(key, fido2CredentialID: credentialID)
    }

    private func insertDeviceKey(_ key: DeviceKeyRecord, fido2CredentialID: String?) async throws {
        let signCount: Int64? = fido2CredentialID == nil ? nil : 0
        try await inTransaction { connection in
            // The user's row is held (FOR UPDATE) and checked: a concurrent removal waits, and
            // a record that fails its seal gets no key.
            guard try await lockSealed(connection, key.user) else { throw StorageError.noSuchUser(key.user) }
            let added = try await Self.count(connection.query("""
                INSERT INTO device_keys (kid, user_name, public_key_jwk, label, created_at, revoked_at,
                                         fido2_credential_id, fido2_sign_count)
                VALUES (\(key.kid), \(key.user), \(key.publicKeyJWK), \(key.label), \(key.createdAt), \(key.revokedAt),
                        \(fido2CredentialID), \(signCount))
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

    public func fido2Credential(kid: String) async throws -> FIDO2Credential? {
        try await withConnection { connection in
            let rows = try await connection.query("""
                SELECT fido2_credential_id, fido2_sign_count FROM device_keys
                WHERE kid = \(kid) AND fido2_credential_id IS NOT NULL
                """, logger: logger)
            for try await row in rows {
                let (credentialID, signCount) = try row.decode((String, Int64).self)
                return FIDO2Credential(credentialID: credentialID, signCount: UInt32(clamping: signCount))
            }
            return nil
        }
    }

    public func useFIDO2Assertion(kid: String, signCount: UInt32, nonce: String, expiresAt: Date, now: Date) async throws
        -> FIDO2AssertionUse
    {
        try await inTransaction { connection in
            // The key's row is held (FOR UPDATE): two daemons answering with the same key
            // compare their counters one after the other.
            var stored: Int64?
            for try await row in try await connection.query("""
                SELECT fido2_sign_count FROM device_keys
                WHERE kid = \(kid) AND fido2_credential_id IS NOT NULL AND revoked_at IS NULL FOR UPDATE
                """, logger: logger) {
                stored = try row.decode(Int64.self)
            }
            guard let stored else { return .noSuchCredential }
            // As useOnce: a value whose mark has expired counts as unused.
            let fresh = try await Self.count(connection.query("""
                INSERT INTO used_once (value, expires_at) VALUES (\(nonce), \(expiresAt))
                ON CONFLICT (value) DO UPDATE SET expires_at = excluded.expires_at
                    WHERE used_once.expires_at < \(now)
                RETURNING 1
                """, logger: logger)) == 1
            guard fresh else { return .nonceReused }
            guard Int64(signCount) > stored || (signCount == 0 && stored == 0) else {
                return .counterDidNotGrow(stored: UInt32(clamping: stored))
            }
            try await connection.query("""
                UPDATE device_keys SET fido2_sign_count = \(Int64(signCount)) WHERE kid = \(kid)
                """, logger: logger)
            return .accepted
        }
    }
}
