import NIOPosix
import StepSignConfig
import StepSignCrypto
import StepSignFormat
import StepSignStorage
import struct Foundation.Date

extension Engine {
    /// The `admin.*` operations (SPEC §3.2); the caller has checked that the peer is an admin.
    func handleAdmin(_ request: Request, config: StepSignConfiguration, now: Date) async throws -> Reply {
        switch request.op {
        case "admin.addUser":
            try request.allowOnly(["user", "password", "mustChangePassword"])
            let user = try request.string("user")
            let password = try request.string("password")
            let mustChange = try request.optionalBool("mustChangePassword") ?? false
            try UserName.validate(user)
            if let violation = policy.violation(password: password, userID: user) {
                throw StepSignError.invalid("the password does not meet the policy: \(violation.message)")
            }
            let parameters = config.password.scryptParameters
            let hash = try await NIOThreadPool.singleton.runIfActive {
                try PasswordHash.make(password: password, parameters: parameters)
            }
            do {
                try await store.addUser(NewUser(name: user, passwordHash: hash, mustChangePassword: mustChange, createdAt: now))
            } catch StorageError.userExists {
                throw StepSignError.invalid("user \"\(user)\" already exists")
            }
            logger.notice("user added", metadata: ["user": "\(user)"])
            return Reply(id: request.id, result: [:])
        case "admin.removeUser", "admin.unlockUser", "admin.expirePassword":
            try request.allowOnly(["user"])
            let user = try request.string("user")
            try await validateExistingName(user)
            let found: Bool = switch request.op {
            case "admin.removeUser": try await store.removeUser(named: user)
            case "admin.unlockUser": try await store.unlockUser(named: user)
            default: try await store.expirePassword(named: user)
            }
            guard found else { throw StepSignError.invalid("no user \"\(user)\"") }
            logger.notice("\(request.op)", metadata: ["user": "\(user)"])
            return Reply(id: request.id, result: [:])
        case "admin.listUsers":
            try request.allowOnly([])
            let users = try await store.listUsers()
            var rows: [JSONValue] = []
            for user in users {
                let keys = try await store.deviceKeys(user: user.name, includeRevoked: false)
                rows.append([
                    "user": .string(user.name),
                    "blocked": .bool(user.isBlocked(at: now)),
                    "passwordExpired": .bool(user.isPasswordExpired(maxAgeDays: config.password.maxAgeDays, at: now)),
                    "deviceKeys": .array(keys.map { .string($0.kid) }),
                ])
            }
            return Reply(id: request.id, result: ["users": .array(rows)])
        case "admin.enrollDeviceKey":
            return try await adminEnrollDeviceKey(request, config: config, now: now)
        case "admin.revokeDeviceKey":
            return try await adminRevokeDeviceKey(request, now: now)
        case "admin.rotateKey":
            try request.allowOnly([])
            let kid = try await keyring.rotate()
            return Reply(id: request.id, result: ["activeKid": .string(kid)])
        case "admin.revokeKey":
            try request.allowOnly(["kid"])
            let kid = try await keyring.revoke(kid: try request.string("kid"))
            return Reply(id: request.id, result: ["activeKid": .string(kid)])
        case "admin.listKeys":
            try request.allowOnly([])
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
            return Reply(id: request.id, result: ["keys": .array(keys)])
        case "admin.auditVerify":
            try request.allowOnly([])
            try await keyring.refresh()
            let options = LedgerVerifier.Options(
                trustedKeys: keyring.trustedKeys,
                revokedKids: Set(keyring.keys.filter { $0.revokedAt != nil }.map(\.kid)),
                checkpointEntries: config.ledger.checkpointEntries
            )
            let audit = try await store.auditLedger(options: options)
            if !audit.ok {
                logger.warning("ledger audit found a problem", metadata: [
                    "firstBadSeq": "\(audit.firstBadSeq.map(String.init) ?? "-")", "problem": "\(audit.problem ?? "")",
                ])
            }
            return Reply(id: request.id, result: [
                "ok": .bool(audit.ok),
                "entries": .int(Int64(audit.entries)),
                "firstBadSeq": audit.firstBadSeq.map { .int($0) } ?? .null,
                "checkpoints": .int(Int64(audit.checkpoints)),
                "problem": audit.problem.map { .string($0) } ?? .null,
            ])
        case "admin.exportLedger":
            try request.allowOnly(["afterSeq", "limit"])
            let afterSeq = try request.optionalInt("afterSeq", in: 0...Int.max) ?? 0
            let limit = try request.optionalInt("limit", in: 1...10_000) ?? 1000
            let entries = try await store.ledgerEntries(afterSeq: Int64(afterSeq), limit: limit)
            // The checkpoints of this page's entries; the last page also carries any above the
            // ledger's end, which is how a cut-off tail shows.
            let isLastPage = entries.count < limit
            let checkpoints = try await store.ledgerCheckpoints(
                afterSeq: Int64(afterSeq), throughSeq: isLastPage ? nil : entries.last?.seq ?? Int64(afterSeq))
            return Reply(id: request.id, result: [
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
        default:
            throw StepSignError.invalid("unknown operation \"\(request.op)\"")
        }
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
