import Logging
import StepSignConfig
import StepSignCrypto
import StepSignFormat
import StepSignMetrics
import StepSignProtocol
import StepSignStorage
import struct Foundation.Date

/// The SSH agent (SPEC §3.5): `unlockAgent` and `lockAgent` on the main socket, and what the
/// agent socket (`StepSignServer.SSHAgentServer`) asks: the identities it lists and the
/// signatures it makes.
extension Engine {
    /// The reason of an unlock's own signature.
    static let agentUnlockReason = "stepsign unlock: the SSH agent signs for this uid"
    /// The reason of every agent signature.
    static let agentSignatureReason = "ssh-agent signature"

    /// `unlockAgent` (SPEC §3.5): a step-up of `user` at (`authLevel`, `authenticatorType`),
    /// as for a signature, whose success is signed (payload: what it unlocks) and opens the
    /// peer uid's agent window for `seconds` (at most `[ssh_agent] unlock_seconds`) and
    /// `[ssh_agent] max_uses` signatures. It never reuses a step-up window, and level 0 (no
    /// step-up) is refused.
    func unlockAgent(_ parameters: UnlockAgentParameters, session: inout Session, context: RequestContext) async throws -> Reply {
        let settings = context.config.sshAgent
        guard settings.enabled else { throw StepSignError(.notSupported, "the SSH agent is off ([ssh_agent] socket)") }
        let seconds = parameters.seconds ?? settings.unlockSeconds
        guard (1...settings.unlockSeconds).contains(seconds) else {
            throw StepSignError.invalid("\"seconds\" must be 1 to \(settings.unlockSeconds) ([ssh_agent] unlock_seconds)")
        }
        let requirement = try AuthenticationMatrix.requirement(level: parameters.authLevel, type: parameters.authenticatorType)
        guard requirement != .none else {
            throw StepSignError(.unsupportedAuthCombination, "the SSH agent opens only after a step-up: level 1 or more")
        }
        _ = try signingRequirement(level: parameters.authLevel, type: parameters.authenticatorType, context: context)
        let user = try await signingUser(named: parameters.user, session: &session, context: context)
        let payload = "unlock the SSH agent for uid \(session.peer.uid): \(seconds) s, at most \(settings.maxUses) signatures"
        var signing = SigningRequest(user: user, payload: payload, payloadLength: payload.count, reason: Self.agentUnlockReason,
                                     authLevel: parameters.authLevel, authenticatorType: parameters.authenticatorType)
        signing.agentUnlock = (seconds, settings.maxUses)
        return try await openFirstStepUp(.one(signing), requirement: requirement, session: &session, context: context)
    }

    /// Opens the agent window of the unlock `signing` just signed, for `peer`'s uid.
    func openAgentWindow(_ signing: SigningRequest, seconds: Int, maxUses: Int, authenticatorUsed: String, signatureID: String,
                         peer: Peer, context: RequestContext) async throws {
        guard let record = try await credentials.store.user(named: signing.user) else { return }
        let maxAgeDays = context.config.password.maxAgeDays
        credentials.sshAgent.open(SSHAgentWindows.Window(
            user: signing.user, level: signing.authLevel, type: signing.authenticatorType, authenticatorUsed: authenticatorUsed,
            signatureID: signatureID, credentialToken: record.credentialToken,
            passwordExpiresAt: maxAgeDays > 0 ? record.passwordChangedAt.addingTimeInterval(Double(maxAgeDays) * 86_400) : nil,
            openedAt: context.now, seconds: seconds, maxUses: maxUses), uid: peer.uid)
        logger.notice("ssh-agent unlocked", metadata: [
            "user": .string(signing.user), "uid": "\(peer.uid)", "seconds": "\(seconds)", "maxUses": "\(maxUses)",
            "signatureID": .string(signatureID),
        ])
    }

    /// `lockAgent` (SPEC §3.5): ends the peer uid's agent window.
    func lockAgent(session: Session) -> Reply {
        let ended = credentials.sshAgent.end(uid: session.peer.uid)
        if ended { logger.notice("ssh-agent locked", metadata: ["uid": "\(session.peer.uid)"]) }
        return Reply(result: ["locked": .bool(ended)])
    }

    /// What `SSH_AGENTC_REQUEST_IDENTITIES` lists: the active signing key as
    /// `ecdsa-sha2-nistp256` (its blob), with its kid as the comment.
    public func sshAgentIdentities() -> [(blob: [UInt8], comment: String)] {
        let (kid, key) = signing.keyring.signer
        return [(SSHPublicKey.blob(key.publicKey), kid)]
    }

    /// `SSH_AGENTC_SIGN_REQUEST` from `peer` (SPEC §3.5): the signature blob, or nil for
    /// `SSH_AGENT_FAILURE`, with a log line saying why. It signs only `data` that is an SSHSIG
    /// blob of a configured namespace (or, with `allow_authentication`, anything else), with
    /// the active key, for a uid with an open unlock window, as the window's user; each
    /// signature is a ledger entry first (claims `ssh`, `authenticatorUsed`, `stepUp`).
    public func sshAgentSign(keyBlob: [UInt8], data: [UInt8], peer: Peer, now: Date = Date()) async -> [UInt8]? {
        let config = settings.config
        let agent = config.sshAgent
        func refuse(_ why: String, _ extra: Logger.Metadata = [:]) -> [UInt8]? {
            logger.warning("ssh-agent refused", metadata: [
                "why": .string(why), "uid": "\(peer.uid)", "pid": "\(peer.pid)", "comm": .string(peer.comm),
            ].merging(extra) { a, _ in a })
            return nil
        }
        let (kid, key) = signing.keyring.signer
        guard keyBlob == SSHPublicKey.blob(key.publicKey) else { return refuse("the key is not the agent's active key") }
        let claim: SSHClaim
        if let signed = SSHSignedData(parsing: data) {
            guard agent.namespaces.contains(signed.namespace) else {
                return refuse("namespace not in [ssh_agent] namespaces", ["namespace": .string(signed.namespace)])
            }
            claim = SSHClaim(namespace: signed.namespace, hashAlgorithm: signed.hashAlgorithm, hash: Hex.encode(signed.hash))
        } else {
            guard agent.allowAuthentication else {
                return refuse("not SSHSIG data (an SSH login's session data?) and [ssh_agent] allow_authentication is false")
            }
            claim = SSHClaim(namespace: "ssh-userauth", hashAlgorithm: "sha256", hash: Hex.encode(SHA256.hash(data)))
        }
        let token: CredentialToken?
        do {
            token = try await windowUserToken(uid: peer.uid, config: config, now: now)
        } catch {
            return refuse("cannot read the user's record", ["error": "\(error)"])
        }
        let window: SSHAgentWindows.Window
        switch credentials.sshAgent.take(uid: peer.uid, credentialToken: token, now: now, maxUses: agent.maxUses,
                                         seconds: agent.unlockSeconds) {
        case let .success(open): window = open
        case let .failure(refusal): return refuse(refusal.description)
        }
        let payload = "sshsig \(claim.namespace) \(claim.hashAlgorithm) \(claim.hash)"
        var request = SigningRequest(user: window.user, payload: payload, payloadLength: payload.count, reason: Self.agentSignatureReason,
                                     authLevel: window.level, authenticatorType: window.type)
        request.ssh = claim
        let rawSignature: [UInt8]
        do {
            // The ledger entry first: a signature the log does not show is never handed out.
            let (details, entry) = try await signing.signer.sign(request, instance: config.instance, authenticatorUsed: window.authenticatorUsed,
                                                                 peer: peer, now: now, reusedFrom: window.signatureID)
            rawSignature = try key.signatureES256(for: data)
            logger.notice("signed", metadata: [
                "user": .string(window.user), "signatureID": .string(details.dataSignatureID), "kid": .string(kid),
                "seq": "\(entry.seq)", "authLevel": "\(window.level)", "authenticatorUsed": .string(window.authenticatorUsed),
                "peerUID": "\(peer.uid)", "peerPID": "\(peer.pid)", "peerComm": .string(peer.comm),
                "reusedFrom": .string(window.signatureID), "sshNamespace": .string(claim.namespace),
            ])
        } catch {
            return refuse("signing failed", ["error": "\(error)"])
        }
        signing.signatureCounters.increment(level: window.level, authenticator: window.authenticatorUsed)
        return SSHPublicKey.signatureBlob(rawES256: rawSignature)
    }

    /// The credential token of the user `uid`'s window signs as, read now: nil when the user
    /// is gone, blocked, must replace the password or failed its seal (the window then ends).
    private func windowUserToken(uid: UInt32, config: StepSignConfiguration, now: Date) async throws -> CredentialToken? {
        guard let user = credentials.sshAgent.window(uid: uid)?.user,
              let record = try await credentials.store.user(named: user), record.sealFailure == nil,
              !record.isBlocked(at: now), !record.mustReplacePassword(maxAgeDays: config.password.maxAgeDays, at: now)
        else { return nil }
        return record.credentialToken
    }

    /// `getPublicKeys` with `format` "ssh" (SPEC §3.5): each published key as an SSH public
    /// key line (comment: its kid), whether it is the active one, and when it signed: from its
    /// creation (`validAfter`, Unix seconds) to its revocation, or to the creation of the next
    /// key of its instance once retired (`validBefore`; null while active), for the
    /// `valid-after`/`valid-before` of an `allowed_signers` line.
    func sshPublicKeys() -> JSONValue {
        let all = signing.keyring.keys
        let published = all.filter { $0.trust.isTrusted && ($0.revokedAt == nil || $0.revokedIndex != nil) }
        return .array(published.sorted { $0.createdAt < $1.createdAt }.map { key in
            let successor = all.filter { $0.instance == key.instance && $0.kid != key.kid && $0.createdAt >= key.createdAt }
                .map(\.createdAt).min()
            let end = key.revokedAt ?? (key.isActive ? nil : successor)
            return .object([
                ("kid", .string(key.kid)),
                ("publicKey", .string(SSHPublicKey.line(key.publicKey, comment: key.kid))),
                ("active", .bool(key.isActive && key.kid == signing.keyring.signer.kid)),
                ("validAfter", .int(Int64(key.createdAt.timeIntervalSince1970.rounded(.down)))),
                ("validBefore", end.map { .int(Int64($0.timeIntervalSince1970.rounded(.up))) } ?? .null),
            ])
        })
    }
}
