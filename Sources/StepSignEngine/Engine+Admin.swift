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
            try UserName.validate(user, new: true)
            if let violation = context.policy.violation(password: password, userID: user) {
                throw StepSignError.invalid("the password does not meet the policy: \(violation.message)")
            }
            let parameters = context.config.password.scryptParameters
            let hash = try await NIOThreadPool.singleton.runIfActive {
                try PasswordHash.make(password: password, parameters: parameters)
            }
            do {
                try await credentials.store.addUser(NewUser(name: user, passwordHash: hash, mustChangePassword: mustChange, createdAt: context.now))
            } catch StorageError.userExists {
                throw StepSignError.invalid("user \"\(user)\" already exists")
            } catch let StorageError.userLookalike(_, existing) {
                throw StepSignError.invalid(
                    "user \"\(user)\" looks like the existing user \"\(existing)\" (the same letters in another Unicode form or case)")
            }
            logger.notice("user added", metadata: ["user": "\(user)"])
            try await recordEvent(.userAdded, user: user, details: [("mustChangePassword", .bool(mustChange))], context: context)
            return Reply(result: [:])
        case let .removeUser(user):
            return try await changeExistingUser(user, "admin.removeUser", event: .userRemoved, context: context) {
                try await $0.removeUser(named: $1)
            }
        case let .unlockUser(user):
            return try await changeExistingUser(user, "admin.unlockUser", event: .userUnlocked, context: context) {
                try await $0.unlockUser(named: $1)
            }
        case let .expirePassword(user):
            return try await changeExistingUser(user, "admin.expirePassword", event: .passwordExpired, context: context) {
                try await $0.expirePassword(named: $1)
            }
        case .listUsers:
            let users = try await credentials.store.listUsers()
            let twins = Self.lookalikes(users.map(\.name))
            var rows: [JSONValue] = []
            for user in users {
                let keys = try await credentials.store.deviceKeys(user: user.name, includeRevoked: false)
                rows.append([
                    "user": .string(user.name),
                    "blocked": .bool(user.isBlocked(at: context.now)),
                    "passwordExpired": .bool(user.isPasswordExpired(maxAgeDays: context.config.password.maxAgeDays, at: context.now)),
                    "deviceKeys": .array(keys.map { .string($0.kid) }),
                    "sealed": .bool(user.sealFailure == nil),
                    "lookalikes": .array((twins[Array(user.name.utf8)] ?? []).map { .string($0) }),
                ])
            }
            return Reply(result: ["users": .array(rows)])
        case let .enrollDeviceKey(user, publicKey, label, fido2):
            return try await adminEnrollDeviceKey(user: user, publicKey: publicKey, label: label, fido2: fido2, context: context)
        case let .revokeDeviceKey(user, kid):
            return try await adminRevokeDeviceKey(user: user, kid: kid, context: context)
        case .rotateKey:
            try await signing.events.recordCreatedKeys(peer: context.peer, instance: context.config.instance, now: context.now)
            let previous = signing.keyring.active.kid
            let kid = try await signing.keyring.rotate()
            try await recordEvent(.signingKeyRotated, details: [("kid", .string(kid)), ("previous", .string(previous))],
                                  context: context)
            return Reply(result: ["activeKid": .string(kid)])
        case .rotateLogKey:
            // Both keys sign every note until the log has grown by the overlap (SPEC §2).
            let size = try await signing.store.ledgerCount()
            let until = size + Int64(context.config.ledger.logKeyOverlapEntries)
            let key = try await signing.keyring.rotateLogKey(overlapUntil: until)
            logger.notice("log key rotated", metadata: ["overlapUntilSize": "\(until)", "logKey": "\(Hex.encode(key.raw))"])
            return Reply(result: ["logKeys": .array(signing.log.verifierKeys.filter { $0.type == .ed25519 }.map { .string($0.description) }),
                                  "overlapUntilSize": .int(until)])
        case let .revokeKey(kid):
            try await signing.events.recordCreatedKeys(peer: context.peer, instance: context.config.instance, now: context.now)
            let revocation = try await signing.keyring.revoke(kid: kid, now: context.now) { rotated in
                if let rotated {
                    try await self.recordEvent(.signingKeyRotated, details: [("kid", .string(rotated.to)), ("previous", .string(rotated.from))],
                                               context: context)
                }
                return try await self.recordEvent(.signingKeyRevoked, details: [("kid", .string(kid))], context: context).seq - 1
            }
            return Reply(result: ["activeKid": .string(revocation.activeKid), "revokedAt": .int(revocation.logIndex)])
        case let .endorseKey(endorsement):
            let kid = try await signing.keyring.addEndorsement(endorsement)
            let key = signing.keyring.keys.first { $0.kid == kid }
            try await recordEvent(.signingKeyEndorsed, details: [
                ("kid", .string(kid)), ("instance", .string(key?.instance ?? "")), ("endorser", .string(KeyTrust.rootEndorser)),
            ], context: context)
            return Reply(result: ["kid": .string(kid), "trusted": .bool(key?.trust.isTrusted ?? false)])
        case .listKeys:
            try await signing.keyring.refresh()
            let keys = signing.keyring.keys.map { key -> JSONValue in
                [
                    "kid": .string(key.kid),
                    "active": .bool(key.isActive),
                    "revoked": .bool(key.revokedAt != nil),
                    "createdAt": .int(Int64(key.createdAt.timeIntervalSince1970)),
                    "instance": .string(key.instance),
                    "revokedAt": key.revokedIndex.map { .int($0) } ?? .null,
                    "trusted": .bool(key.trust.isTrusted),
                    "trust": .string(Self.describe(key.trust)),
                    "keyStore": key.isOwn ? .string(key.location) : .null,
                    "jwk": Self.jwkJSON(key.publicKey.jwk),
                ]
            }
            return Reply(result: ["keys": .array(keys), "logKeyStore": .string(signing.keyring.logKeyLocation)])
        case .auditVerify:
            return try await auditVerify(context: context)
        case let .addCosignatures(treeSize, cosignatures):
            return try await addCosignatures(treeSize: Int64(treeSize), lines: cosignatures, context: context)
        case let .awaitCheckpointRequest(waitSeconds):
            return Reply(result: ["requested": .bool(await signing.witnessWaits.nextRequest(within: waitSeconds))])
        case let .addGroupMember(group, user):
            return try await addGroupMember(group: group, user: user, context: context)
        case let .removeGroupMember(group, user):
            return try await removeGroupMember(group: group, user: user, context: context)
        case .listGroups:
            return try await listGroups()
        case .backup:
            return try await backup(context: context)
        case .recover:
            return try await recoverLog(context: context)
        case let .exportLedger(afterSeq, limit):
            let entries = try await signing.store.ledgerEntries(afterSeq: Int64(afterSeq), limit: limit)
            // The checkpoints of this page's entries; the last page also carries any above the
            // ledger's end, which is how a cut-off tail shows.
            let isLastPage = entries.count < limit
            let checkpoints = try await signing.store.ledgerCheckpoints(
                afterSeq: Int64(afterSeq), throughSeq: isLastPage ? nil : entries.last?.seq ?? Int64(afterSeq))
            // The log's C2SP checkpoints (SPEC §5.5) by the same rule, by tree size.
            let logCheckpoints = try await signing.store.logCheckpoints(
                afterSize: Int64(afterSeq), throughSize: isLastPage ? nil : entries.last?.seq ?? Int64(afterSeq))
            var noteLines: [JSONValue] = []
            for checkpoint in logCheckpoints {
                noteLines.append(.string(try await cosigned(note: checkpoint.note, size: checkpoint.size)))
            }
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
                        "kind": .string(LedgerExportEntry.isEvent(entry.jws) ? "event" : "signature"),
                    ]
                }),
                "checkpoints": .array(checkpoints.map { .string($0.jws) }),
                "logCheckpoints": .array(noteLines),
            ])
        }
    }

    /// `admin.auditVerify`: the ledger against the trusted keys (SPEC §5.3), and every key
    /// the store lists that the daemon does not trust (SPEC §5.4), which makes it not `ok`.
    private func auditVerify(context: RequestContext) async throws -> Reply {
        try await signing.keyring.refresh()
        let keys = signing.keyring.keys
        let untrusted = keys.filter { !$0.trust.isTrusted }
        let options = LedgerVerifier.Options(
            trustedKeys: signing.keyring.trustedKeys,
            // Keys revoked at a proven log index are in trustedKeys with it (their earlier
            // entries stay valid); those revoked without one have all their entries reported.
            revokedKids: Set(keys.filter { $0.revokedAt != nil && $0.revokedIndex == nil && $0.trust.isTrusted }.map(\.kid)),
            checkpointEntries: context.config.ledger.checkpointEntries,
            untrustedKids: Dictionary(untrusted.map { ($0.kid, $0.trust.problem ?? "") }, uniquingKeysWith: { $1 }),
            logKeys: signing.log.verifierKeys
        )
        let audit = try await signing.store.auditLedger(options: options)
        var ok = audit.ok
        var problem = audit.problem
        if ok, let key = untrusted.first {
            ok = false
            problem = "the store lists signing key \(key.kid) of instance \"\(key.instance)\", which is not trusted: "
                + (key.trust.problem ?? "")
        }
        // The stored tree, the epochs and the cosignatures (SPEC §5.5): what the entries make,
        // what signed events started, what the witnesses' keys verify.
        if ok, let logProblem = try await LogAudit(store: signing.store, keyring: signing.keyring, logger: logger,
                                                   origins: signing.log.knownOrigins, witnesses: settings.witnessKeys).run() {
            ok = false
            problem = logProblem
        }
        // Credential records someone wrote behind the daemon's back (SPEC §5.4).
        let unsealed = try await credentials.store.listUsers().compactMap { user in user.sealFailure.map { (user.name, $0) } }
        for (user, failure) in unsealed { credentials.sealAlarm.report(user: user, failure) }
        if ok, let (user, failure) = unsealed.first {
            ok = false
            problem = "the credential record of user \(user) failed its seal check: \(failure)"
        }
        // Requests for approval someone wrote behind the daemon's back (SPEC §3.4, §5.5): their
        // fixed fields, state, votes and binding to their latest event.
        let unsoundRequests = try await approvals.store.allApprovals().compactMap { record in
            record.sealFailure.map { (record.id, $0) }
        }
        for (id, failure) in unsoundRequests { credentials.sealAlarm.report(approval: id, failure) }
        if ok, let (id, failure) = unsoundRequests.first {
            ok = false
            problem = "the request for approval \(id) failed its seal check: \(failure)"
        }
        if !ok {
            logger.warning("ledger audit found a problem", metadata: [
                "firstBadSeq": "\(audit.firstBadSeq.map(String.init) ?? "-")", "problem": "\(problem ?? "")",
            ])
        }
        return Reply(result: [
            "ok": .bool(ok),
            "entries": .int(Int64(audit.entries)),
            "firstBadSeq": audit.firstBadSeq.map { .int($0) } ?? .null,
            "checkpoints": .int(Int64(audit.checkpoints)),
            "problem": problem.map { .string($0) } ?? .null,
            "events": .int(Int64(audit.events)),
            "untrustedKeys": .array(untrusted.map { key in
                ["kid": .string(key.kid), "instance": .string(key.instance), "reason": .string(key.trust.problem ?? "")]
            }),
            "unsealedRecords": .array(unsealed.map { user, failure in
                ["user": .string(user), "problem": .string(failure.name), "reason": .string(failure.description)]
            }),
            "unsealedApprovals": .array(unsoundRequests.map { id, failure in
                ["approvalID": .string(id), "problem": .string(failure.name), "reason": .string(failure.description)]
            }),
        ])
    }

    /// How `admin.listKeys` names a key's trust: "own", "endorsed by root", "endorsed by KID",
    /// or "untrusted: reason".
    static func describe(_ trust: KeyTrust) -> String {
        switch trust {
        case .own: "own"
        case let .endorsed(endorser): "endorsed by \(endorser)"
        case let .untrusted(reason): "untrusted: \(reason)"
        }
    }

    /// Removes, unlocks or expires the password of an existing user (error 4 if there is none),
    /// and records `event` in the ledger.
    private func changeExistingUser(_ user: String, _ op: String, event: LedgerEvent.Kind, context: RequestContext,
                                    _ change: (any CredentialStore, String) async throws -> Bool) async throws -> Reply {
        try await validateExistingName(user)
        guard try await change(credentials.store, user) else { throw StepSignError.invalid("no user \"\(user)\"") }
        logger.notice("\(op)", metadata: ["user": "\(user)"])
        try await recordEvent(event, user: user, context: context)
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
            guard try await credentials.store.user(named: user) != nil else { throw error }
        }
    }

    /// For each of `names` that looks like others (SPEC §3: ``UserIDForm/lookalikeKey(_:)``), keyed
    /// by its bytes, the others: users added before lookalikes were refused, kept and listed.
    static func lookalikes(_ names: [String]) -> [[UInt8]: [String]] {
        var byKey: [[UInt8]: [String]] = [:]
        for name in names { byKey[Array(UserIDForm.lookalikeKey(name).utf8), default: []].append(name) }
        var twins: [[UInt8]: [String]] = [:]
        for group in byKey.values where group.count > 1 {
            for name in group { twins[Array(name.utf8)] = group.filter { !ScalarText.equal($0, name) } }
        }
        return twins
    }
}
