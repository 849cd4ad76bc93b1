import Foundation
import GRDB

// LDA device keys.
extension SQLiteStore {
    static func decodeDeviceKey(_ row: Row) throws -> DeviceKeyRecord {
        do {
            return DeviceKeyRecord(
                kid: try row.decode(forColumn: "kid"),
                user: try row.decode(forColumn: "user_name"),
                publicKeyJWK: try row.decode(forColumn: "public_key_jwk"),
                label: try row.decode(forColumn: "label"),
                createdAt: Date(storageSeconds: try row.decode(forColumn: "created_at")),
                revokedAt: (try row.decode(Double?.self, forColumn: "revoked_at")).map(Date.init(storageSeconds:))
            )
        } catch {
            throw StorageError.malformedRow(table: "device_keys", detail: "\(error)")
        }
    }

    public func addDeviceKey(_ key: DeviceKeyRecord) async throws {
        try await insertDeviceKey(key, fido2CredentialID: nil)
    }

    public func addFIDO2DeviceKey(_ key: DeviceKeyRecord, credentialID: String) async throws {
        try await insertDeviceKey(key, fido2CredentialID: credentialID)
    }

    private func insertDeviceKey(_ key: DeviceKeyRecord, fido2CredentialID: String?) async throws {
        try await pool.write { db in
            guard try Self.userExists(db, key.user) else { throw StorageError.noSuchUser(key.user) }
            try self.requireSealed(db, key.user)
            let taken = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM device_keys WHERE kid = ?)", arguments: [key.kid]
            ) ?? false
            guard !taken else { throw StorageError.deviceKeyExists(key.kid) }
            try db.execute(
                sql: """
                    INSERT INTO device_keys (kid, user_name, public_key_jwk, label, created_at, revoked_at,
                                             fido2_credential_id, fido2_sign_count)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    key.kid, key.user, key.publicKeyJWK, key.label, key.createdAt.storageSeconds,
                    key.revokedAt?.storageSeconds, fido2CredentialID, fido2CredentialID == nil ? nil : 0,
                ]
            )
            try self.reseal(db, key.user)
        }
    }

    public func deviceKeys(user: String, includeRevoked: Bool) async throws -> [DeviceKeyRecord] {
        try await pool.read { db in
            // The keys of a record that fails its check are never used.
            guard try self.sealFailure(db, user) == nil else { return [] }
            let filter = includeRevoked ? "" : " AND revoked_at IS NULL"
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT kid, user_name, public_key_jwk, label, created_at, revoked_at FROM device_keys
                    WHERE user_name = ?\(filter) ORDER BY created_at, rowid
                    """,
                arguments: [user]
            ).map(Self.decodeDeviceKey)
        }
    }

    public func revokeDeviceKey(user: String, kid: String, at: Date) async throws -> Bool {
        try await pool.write { db in
            try self.requireSealed(db, user)
            try db.execute(
                sql: "UPDATE device_keys SET revoked_at = ? WHERE user_name = ? AND kid = ? AND revoked_at IS NULL",
                arguments: [at.storageSeconds, user, kid]
            )
            guard db.changesCount > 0 else { return false }
            try self.reseal(db, user)
            return true
        }
    }

    public func fido2Credential(kid: String) async throws -> FIDO2Credential? {
        try await pool.read { db in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT fido2_credential_id, fido2_sign_count FROM device_keys WHERE kid = ? AND fido2_credential_id IS NOT NULL",
                arguments: [kid])
            else { return nil }
            return FIDO2Credential(credentialID: row["fido2_credential_id"], signCount: UInt32(clamping: row["fido2_sign_count"] as Int64))
        }
    }

    public func useFIDO2Assertion(kid: String, signCount: UInt32, nonce: String, expiresAt: Date, now: Date) async throws
        -> FIDO2AssertionUse
    {
        try await pool.write { db in
            guard let stored = try Int64.fetchOne(
                db, sql: "SELECT fido2_sign_count FROM device_keys WHERE kid = ? AND fido2_credential_id IS NOT NULL AND revoked_at IS NULL",
                arguments: [kid])
            else { return .noSuchCredential }
            try db.cachedStatement(sql: "DELETE FROM used_once WHERE expires_at < ?").execute(arguments: [now.storageSeconds])
            try db.cachedStatement(sql: "INSERT INTO used_once (value, expires_at) VALUES (?, ?) ON CONFLICT (value) DO NOTHING")
                .execute(arguments: [nonce, expiresAt.storageSeconds])
            guard db.changesCount == 1 else { return .nonceReused }
            guard Int64(signCount) > stored || (signCount == 0 && stored == 0) else {
                return .counterDidNotGrow(stored: UInt32(clamping: stored))
            }
            try db.execute(sql: "UPDATE device_keys SET fido2_sign_count = ? WHERE kid = ?", arguments: [Int64(signCount), kid])
            return .accepted
        }
    }
}
