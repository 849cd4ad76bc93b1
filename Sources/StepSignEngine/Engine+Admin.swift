import NIOPosix
import StepSignProtocol
import StepSignConfig
import StepSignCrypto
import StepSignFormat
import StepSignStorage
import struct Foundation.Date

extension Engine {
    /// The `admin.*` operations (SPEC §3.2); the caller has checked that the peer is an admin.
    func handleAdmin(_ operation: AdminOperation, context: RequestContext) async throws -> Reply {
        switch operation {
        case let .addUser(user, password, mustChange):
            try UserName.validate(user)
            if let violation = context.policy.violation(password: password, userID: user) {
                throw StepSignError.invalid("the password does not meet the policy: \(violation.message)")
            }
            let parameters = context.config.password.scryptParameters
            let hash = try await NIOThreadPool.singleton.runIfActive {
                try PasswordHash.make(password: password, parameters: parameters)
            }
            do {
                try await store.addUser(NewUser(name: user, passwordHash: hash, mustChangePassword: mustChange, createdAt: context.now))
            } catch StorageError.userExists {
                throw StepSignError.invalid("user \"\(user)\" already exists")
            }
            logger.notice("user added", metadata: ["user": "\(user)"])
            return Reply(result: [:])
        case let .removeUser(user):
            return try await changeExistingUser(user, "admin.removeUser") { try await $0.removeUser(named: $1) }
        case let .unlockUser(user):
            return try await changeExistingUser(user, "admin.unlockUser") { try await $0.unlockUser(named: $1) }
        case let .expirePassword(user):
            return try await changeExistingUser(user, "admin.expirePassword") { try await $0.expirePassword(named: $1) }
        case .listUsers:
            let users = try await store.listUsers()
            var rows: [JSONValue] = []
            for user in users {
                let keys = try await store.deviceKeys(user: user.name, includeRevoked: false)
                rows.append([
                    "user": .string(user.name),
                    "blocked": .bool(user.isBlocked(at: context.now)),
                    "passwordExpired": .bool(user.isPasswordExpired(maxAgeDays: context.config.password.maxAgeDays, at: context.now)),
                    "deviceKeys": .array(keys.map { .string($0.kid) }),
                ])
            }
            return Reply(result: ["users": .array(rows)])
        case let .enrollDeviceKey(user, publicKey, label):
            return try await adminEnrollDeviceKey(user: user, publicKey: publicKey, label: label, context: context)
        case let .revokeDeviceKey(user, kid):
            return try await adminRevokeDeviceKey(user: user, kid: kid, now: context.now)
        case .rotateKey:
            let kid = try await keyring.rotate()
            return Reply(result: ["activeKid": .string(kid)])
        case let .revokeKey(kid):
            let kid = try await keyring.revoke(kid: kid)
            return Reply(result: ["activeKid": .string(kid)])
        case .listKeys:
            try await keyring.refresh()
            let keys = keyring.keys.map { key -> JSONValue in
                [
                    "kid": .string(key.kid),
                    "active": .bool(key.isActive),
                    "revoked": .bool(key.revokedAt != nil),
                    "createdAt": .int(Int64(key.createdAt.timeIntervalSince1970)),
                    "instance": .string(key.instance),
                ]
            }
            return Reply(result: ["keys": .array(keys)])
        case .auditVerify:
            try await keyring.refresh()
            let options = LedgerVerifier.Options(
                trustedKeys: keyring.trustedKeys,
                revokedKids: Set(keyring.keys.filter { $0.revokedAt != nil }.map(\.kid)),
                checkpointEntries: context.config.ledger.checkpointEntries
            )
            let audit = try await store.auditLedger(options: options)
            if !audit.ok {
                logger.warning("ledger audit found a problem", metadata: [
                    "firstBadSeq": "\(audit.firstBadSeq.map(String.init) ?? "-")", "problem": "\(audit.problem ?? "")",
                ])
            }
            return Reply(result: [
                "ok": .bool(audit.ok),
                "entries": .int(Int64(audit.entries)),
                "firstBadSeq": audit.firstBadSeq.map { .int($0) } ?? .null,
                "checkpoints": .int(Int64(audit.checkpoints)),
                "problem": audit.problem.map { .string($0) } ?? .null,
            ])
        case let .exportLedger(afterSeq, limit):
            let entries = try await store.ledgerEntries(afterSeq: Int64(afterSeq), limit: limit)
            // The checkpoints of this page's entries; the last page also carries any above the
            // ledger's end, which is how a cut-off tail shows.
            let isLastPage = entries.count < limit
            let checkpoints = try await store.ledgerCheckpoints(
                afterSeq: Int64(afterSeq), throughSeq: isLastPage ? nil : entries.last?.seq ?? Int64(afterSeq))
            return Reply(result: [
                "entries": .array(entries.map { entry in
                    [
                        "seq": .int(entry.seq),
                        "signatureID": .string(entry.signatureID),
                        "payloadSignature": .string(entry.jws),
                        "prevHash": .string(Hex.encode(entry.prevHash)),
                        "entryHash": .string(Hex.encode(entry.entryHash)),
                        "user": .string(entry.user),
                        "peer": ["uid": .int(Int64(entry.peer.uid)), "pid": .int(Int64(entry.peer.pid)),
                                 "comm": .string(entry.peer.comm)],
                    ]
                }),
                "checkpoints": .array(checkpoints.map { .string($0.jws) }),
            ])
        }
    }

    /// Removes, unlocks or expires the password of an existing user (error 4 if there is none).
    private func changeExistingUser(_ user: String, _ op: String,
                                    _ change: (any StepSignStore, String) async throws -> Bool) async throws -> Reply {
        try await validateExistingName(user)
        guard try await change(store, user) else { throw StepSignError.invalid("no user \"\(user)\"") }
        logger.notice("\(op)", metadata: ["user": "\(user)"])
        return Reply(result: [:])
    }
}

extension Engine {
    /// The user ID rule (``UserName``) for admin operations that only take away (remove,
    /// unlock, expire, revoke a device key): a name that breaks it is still accepted when such
    /// a user exists, added before the rule was this strict, so that an admin can remove it.
    func validateExistingName(_ user: String) async throws {
        do {
            try UserName.validate(user)
        } catch {
            guard try await store.user(named: user) != nil else { throw error }
        }
    }
}
