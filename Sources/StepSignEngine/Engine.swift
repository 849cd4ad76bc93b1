import Logging
import StepSignProtocol
import NIOConcurrencyHelpers
import StepSignConfig
import StepSignCrypto
import StepSignFormat
import StepSignStorage
import StepSignVersion
import Synchronization
import struct Foundation.Date
import StepSignMetrics

/// The authentication engine: every operation of SPEC §3.2, independent of the transport.
///
/// One engine serves every connection; each connection brings its own `Session`. The engine
/// keeps no per-connection state of its own, so requests of different connections run
/// concurrently.
public final class Engine: Sendable {
    /// The daemon's version, reported by `status`.
    public static let version = StepSignVersion.current

    // The engine's state, by owner. Sessions are not here: each connection owns its
    // `Session` and passes it to every request (see `Session/Session.swift`). The rest is in
    // three parts, each with the part of the store it may use, so a handler says which it
    // touches (`credentials.`, `signing.`, `approvals.`): see `Parts/`.

    /// The users and how they prove who they are.
    let credentials: Credentials
    /// Keys, signatures, events and the ledger as a transparency log.
    let signing: Signing
    /// Requests waiting for approval, and the approver groups.
    let approvals: Approvals

    // MARK: Settings and the daemon's life

    let logger: Logger
    let startedAt: Date
    /// The store's online copy (`admin.backup`), when it has one (SQLite).
    let onlineBackup: (any OnlineBackupStore)?
    /// Whether `admin.backup` is making a copy (one at a time).
    let backupInProgress = NIOLockedValueBox(false)
    private let configuration: NIOLockedValueBox<Settings>

    /// The configuration with what is derived from it, swapped as one on reload.
    ///
    /// A class, so that a request takes the snapshot in force with one retain under the lock
    /// and reads fields through it, instead of copying the whole configuration each time.
    final class Settings: Sendable {
        let config: StepSignConfiguration
        let access: AccessPolicy
        let policy: PasswordPolicyChecker
        /// The IDV server's keys (`idv.trusted_keys`), or nil when IDV is off.
        let idvKeys: TrustedKeys?
        /// The `[[witness]]` cosignature keys (SPEC §5.6).
        let witnessKeys: [NoteVerifierKey]

        init(config: StepSignConfiguration, access: AccessPolicy, policy: PasswordPolicyChecker, idvKeys: TrustedKeys?,
             witnessKeys: [NoteVerifierKey]) {
            self.config = config
            self.access = access
            self.policy = policy
            self.idvKeys = idvKeys
            self.witnessKeys = witnessKeys
        }
    }

    /// The settings in force.
    var settings: Settings { configuration.withLockedValue { $0 } }

    /// Gets ready to serve with `configuration`, the open store and keyring.
    ///
    /// Throws if the configured common-password file cannot be read. `logOrigin` is the log's
    /// origin as ``claimLogOrigin(configuration:store:)`` settled it (nil: the configured one).
    public init(configuration: StepSignConfiguration, store: any StepSignStore, keyring: Keyring, logger: Logger,
                logOrigin: String? = nil) throws {
        let settingsBox = NIOLockedValueBox(try Self.settings(configuration))
        self.configuration = settingsBox
        self.onlineBackup = store as? any OnlineBackupStore
        self.approvals = Approvals(store: store)
        // A key in a PKCS#11 token signs on threads of its own, as many as the token's sessions.
        let tokenThreads = TokenSigningThreads(threads: configuration.signing.keyStore == .pkcs11
            ? configuration.signing.pkcs11.maxSessions : nil)
        let logAlarm = LogAlarm(logger: logger)
        let log = TransparencyLog(origin: logOrigin ?? TransparencyLog.origin(configured: configuration.ledger.origin,
                                                                              instance: configuration.instance),
                                  instance: configuration.instance, store: store, keyring: keyring, alarm: logAlarm,
                                  logger: logger,
                                  publisher: configuration.ledger.tilesDir.isEmpty ? nil
                                      : TilePublisher(directory: configuration.ledger.tilesDir, store: store,
                                                      witnesses: { settingsBox.withLockedValue { $0.witnessKeys } },
                                                      logger: logger),
                                  threads: tokenThreads)
        log.republishLatest()
        let checkpointer = LedgerCheckpointer(log: log, logger: logger) {
            let config = settingsBox.withLockedValue { $0.config }
            return LedgerCheckpointer.Settings(entries: config.ledger.checkpointEntries, seconds: config.ledger.checkpointSeconds)
        }
        let noSpaceAlarm = NoSpaceAlarm(logger: logger)
        let ledger = LedgerWriter(store: store, checkpointer: checkpointer, logger: logger, logAlarm: logAlarm,
                                  noSpaceAlarm: noSpaceAlarm)
        let stepUpReuse = StepUpReuseWindows()
        let sshAgent = SSHAgentWindows()
        let events = EventRecorder(keyring: keyring, ledger: ledger, onUserEvent: {
            stepUpReuse.end(user: $0)
            sshAgent.end(user: $0)
        })
        self.signing = Signing(store: store, keyring: keyring, signer: Signer(keyring: keyring, ledger: ledger, threads: tokenThreads), events: events,
                               log: log, checkpointer: checkpointer, logAlarm: logAlarm, noSpaceAlarm: noSpaceAlarm)
        let sealAlarm = SealAlarm(logger: logger)
        let passwords = try PasswordAuthenticator(
            store: store, parameters: configuration.password.scryptParameters, checks: CheckScheduler(), logger: logger,
            sealAlarm: sealAlarm,
            onBlocked: { name, peer, now in
                // The user's step-up reuse windows end now, before the event is recorded.
                stepUpReuse.end(user: name)
                sshAgent.end(user: name)
                // Recorded after the reply's outcome, so that a user's last wrong answer takes as
                // long as an unknown name's; only users get an event (a name is not logged).
                Task {
                    do {
                        guard try await store.user(named: name) != nil else { return }
                        let instance = settingsBox.withLockedValue { $0.config.instance }
                        try await events.record(.userBlocked, user: name, peer: peer, instance: instance, now: now)
                    } catch {
                        logger.error("cannot record a block in the ledger", metadata: ["user": "\(name)", "error": "\(error)"])
                    }
                }
            })
        let deviceKeys = DeviceKeys(store: store, logger: logger)
        let idvVerifier = IDVAssertionVerifier()
        self.credentials = Credentials(
            store: store, passwords: passwords, deviceKeys: deviceKeys, idvVerifier: idvVerifier, sealAlarm: sealAlarm,
            codeDelivery: CodeDelivery(logger: logger), stepUpReuse: stepUpReuse, sshAgent: sshAgent,
            stepUp: StepUpDependencies(passwords: passwords, users: store, singleUse: store, deviceKeys: deviceKeys,
                                       idvVerifier: idvVerifier, logger: logger))
        self.logger = logger
        self.startedAt = Date()
    }

    private static func settings(_ config: StepSignConfiguration) throws -> Settings {
        Settings(
            config: config,
            access: AccessPolicy(config.access),
            policy: PasswordPolicyChecker(policy: config.password.policy,
                                          commonPasswords: try config.password.loadCommonPasswords()),
            idvKeys: try config.idv.loadTrustedKeys(),
            witnessKeys: try config.loadWitnessKeys()
        )
    }

    /// The configuration in force.
    public var config: StepSignConfiguration { settings.config }

    /// `server.idle_timeout_seconds` in force.
    public var idleTimeoutSeconds: Int { settings.config.server.idleTimeoutSeconds }

    /// `server.max_connections` in force.
    public var maxConnections: Int { settings.config.server.maxConnections }

    /// The log's origin (SPEC §5.5), settled with the store before the engine starts: the
    /// stored one, or this daemon's when it is the first. Throws ``LogOriginMismatch`` when
    /// `ledger.origin` names another (exit 78).
    public static func claimLogOrigin(configuration: StepSignConfiguration, store: any StepSignStore) async throws -> String {
        try await TransparencyLog.claimOrigin(configured: configuration.ledger.origin, instance: configuration.instance,
                                              store: store)
    }

    /// Records the daemon's start in the ledger (SPEC §5.4): the key it made, if it made one,
    /// and the configuration it loaded, by the SHA-256 of the file's bytes. Call once, before
    /// serving.
    ///
    /// A log whose Merkle tree does not match its entries (rows removed or rewritten behind the
    /// daemon's back) is not an error here: the start is not recorded, the daemon serves with
    /// every signing refused and `status` saying why (``LogAlarm``), so the audit can show
    /// what was done.
    public func recordStart(configurationSHA256 digest: [UInt8], now: Date = Date()) async throws {
        do {
            // The log as stored must extend the last checkpoint this daemon signed (SPEC §5.5):
            // checked first, so a database restored or rewritten while the daemon was down gets
            // no event of this start (a restore that lost entries stays exactly as restored,
            // for `admin.recover`), and checked again below with the start's events in it.
            try await signing.log.checkKept()
            try await signing.events.recordCreatedKeys(peer: EventRecorder.daemon, instance: config.instance, now: now)
            try await signing.events.record(.configurationLoaded, details: [("sha256", .string(Hex.encode(digest)))],
                                            peer: EventRecorder.daemon, instance: config.instance, now: now)
            _ = try await signing.log.checkpointHead(reason: "start")
        } catch let StorageError.ledgerTreeBroken(why) {
            signing.logAlarm.report(why)
        }
        await warnOfLookalikes()
    }

    /// Says, at start, which users look alike (SPEC §3: added before lookalikes were refused).
    /// They are kept: `admin.listUsers` lists each with its `lookalikes`, for an admin to remove.
    func warnOfLookalikes() async {
        guard let users = try? await credentials.store.listUsers() else { return }
        for (name, others) in Self.lookalikes(users.map(\.name)) {
            logger.warning("two user IDs look alike (added before lookalikes were refused); admin.listUsers shows them", metadata: [
                "user": .string(String(decoding: name, as: UTF8.self)), "lookalikes": .array(others.map { .string($0) }),
            ])
        }
    }

    /// Puts a new configuration in force for the requests that follow (SIGHUP); if it cannot
    /// be (an unreadable common-password file, scrypt parameters that cannot hash), the old one
    /// stays and the error is thrown. Everything is prepared before anything is swapped in.
    ///
    /// The change is recorded in the ledger (`configurationLoaded` with the SHA-256 of the
    /// file's bytes) before it is put in force; if it cannot be recorded, the old
    /// configuration stays.
    public func reload(_ new: StepSignConfiguration, sha256 digest: [UInt8], now: Date = Date()) async throws {
        let settings = try Self.settings(new)
        let root = try new.cluster.loadRootKey()
        try await signing.events.record(.configurationLoaded, details: [("sha256", .string(Hex.encode(digest)))],
                                        peer: EventRecorder.daemon, instance: config.instance, now: now)
        try credentials.passwords.useParameters(new.password.scryptParameters)
        configuration.withLockedValue { $0 = settings }
        signing.keyring.useClusterRoot(root)
    }

    /// Clean shutdown: logs the level-0 signatures not yet summarized and checkpoints the
    /// ledger head (SPEC §5.3), and publishes it as tiles if `ledger.tiles_dir` is set. Call
    /// after the last request.
    public func shutdown() async {
        logSummary(signing.levelZeroSummary.flush(now: Date(), force: true))
        await signing.checkpointer.shutdown()
        await signing.log.publisher?.idle()
        await signing.signer.threads.shutdown()
    }

    /// Shutdown has begun: requests that wait (`getApproval` with `waitSeconds`,
    /// `waitForProof`, `admin.awaitCheckpointRequest`) answer with what they have now, so the
    /// requests in flight end within the server's grace.
    public func endWaits() {
        approvals.waitsEnded.store(true, ordering: .relaxed)
        signing.witnessWaits.endAll()
    }

    /// Logs the summary of level-0 signatures if its minute is over by `now`; the daemon calls
    /// it every few seconds, so a summary is at most that late when signing stops.
    public func flushSigningSummary(now: Date = Date()) {
        logSummary(signing.levelZeroSummary.flush(now: now))
    }

    /// One `info` line for a window of level-0 signatures: the count, the window, and the
    /// count of each peer as `uid/comm=count`, most first.
    func logSummary(_ window: SigningSummary.Window?) {
        guard let window else { return }
        var metadata: Logger.Metadata = [
            "signatures": "\(window.total)",
            "seconds": "\(Int(window.end.timeIntervalSince(window.start).rounded()))",
            "peers": .string(window.byPeer.map { "\($0.peer.uid)/\($0.peer.comm)=\($0.count)" }.joined(separator: ",")),
        ]
        if window.otherPeers > 0 { metadata["otherPeers"] = "\(window.otherPeers)" }
        logger.info("signed at level 0", metadata: metadata)
    }

    /// What `peer` may do under the access lists in force.
    public func admit(_ peer: Peer) -> AccessPolicy.Decision {
        settings.access.decide(peer)
    }

    /// Handles one request line and returns its one reply.
    ///
    /// The access lists in force decide every request, so a reload that removes a peer (or its
    /// admin right) applies to its open connections too: a refused peer's request is answered
    /// with error 13 and the connection is to be closed. The whole request sees one snapshot of
    /// the settings, from this decision to its reply.
    ///
    /// It and the functions of the level-0 path below it are `nonisolated(nonsending)`: they
    /// run on their caller's executor (the connection's event loop), where a plain `nonisolated`
    /// async function first asks the runtime for the task's preferred executor, under a lock,
    /// at every call (issue 43).
    public nonisolated(nonsending) func handle(line: some Collection<UInt8>, session: inout Session, now: Date = Date()) async -> Reply {
        let settings = self.settings
        let decoded = Request.decode(line)
        let decision = settings.access.decide(session.peer)
        guard decision != .refused else {
            logger.warning("refused peer after reload", metadata: ["uid": "\(session.peer.uid)", "pid": "\(session.peer.pid)"])
            let id = switch decoded {
            case let .success(request): request.id
            case let .failure(failure): failure.id
            }
            return Reply(id: id, error: StepSignError(.permissionDenied, "this peer may no longer use stepsignd"),
                         closesConnection: true)
        }
        session.isAdmin = decision == .admin
        switch decoded {
        case let .failure(failure):
            return Reply(id: failure.id, error: failure.error)
        case let .success(request):
            return await handle(request, session: &session, settings: settings, now: now)
        }
    }

    private nonisolated(nonsending) func handle(_ request: Request, session: inout Session, settings: Settings, now: Date) async -> Reply {
        var reply: Reply
        do {
            reply = try await dispatch(request, session: &session, settings: settings, now: now)
        } catch let error as StepSignError {
            reply = Reply(error: error)
        } catch let StorageError.recordSealBroken(user, failure) {
            // A record someone wrote behind the daemon's back is neither used nor changed: the
            // user is answered as a blocked one (SPEC §5.4).
            credentials.sealAlarm.report(user: user, failure)
            reply = Reply(error: StepSignError(.userBlocked, session.isAdmin
                ? "the user's record failed its seal check (admin.auditVerify lists it): remove the user and add them again"
                : "the user is blocked"))
        } catch let StorageError.ledgerTreeBroken(why) {
            signing.logAlarm.report(why)
            reply = Reply(error: .internalError(
                "the ledger's Merkle tree does not match its entries (status says why): nothing was signed or changed"))
        } catch let StorageError.ledgerCommitOutcomeUnknown(signatureIDs) {
            // The one error 15 that cannot say "nothing was signed" (docs/decisions.md): the
            // signature was handed to no one, but its ledger row may exist.
            logger.error("request failed", metadata: ["op": "\(request.op)", "error": "ledger commit outcome unknown",
                                                      "signatureIDs": "\(signatureIDs.joined(separator: ","))"])
            reply = Reply(error: .internalError(
                "internal error: the database connection broke while the signature was being recorded; "
                    + "it was not returned, but may be in the ledger; safe to retry"))
        } catch let error where StorageError.meansNoSpace(error) {
            // A full disk is said once (the alarm), not per request; the transaction was
            // rolled back whole.
            signing.noSpaceAlarm.report(error)
            reply = Reply(error: .internalError(
                "no space left on the daemon's disk: nothing was signed or changed; retry once space is freed"))
        } catch {
            logger.error("request failed", metadata: ["op": "\(request.op)", "error": "\(error)"])
            reply = Reply(error: .internalError("internal error; nothing was signed or changed"))
        }
        reply.id = request.id
        if let code = reply.error?.code, code != .accepted {
            StepSignMetric.refusals.increment(by: 1, [("code", "\(code.rawValue)")])
        }
        return reply
    }

    /// Expires a stale challenge, refuses admin operations to other peers (13) before reading
    /// their parameters, decodes the operation once, and runs it.
    private nonisolated(nonsending) func dispatch(_ request: Request, session: inout Session, settings: Settings, now: Date) async throws -> Reply {
        try expireChallenge(request, session: &session, timeout: settings.config.server.challengeTimeoutSeconds, now: now)
        if Operation.isAdmin(request.op), !session.isAdmin {
            throw StepSignError(.permissionDenied, "\(request.op) is for admin peers only")
        }
        let context = RequestContext(settings: settings, now: now, peer: session.peer)
        switch try Operation(request) {
        case let .authenticateUserAndSignData(parameters):
            return try await authenticateUserAndSignData(parameters, session: &session, context: context)
        case let .authenticateUserAndSignBatch(parameters):
            return try await authenticateUserAndSignBatch(parameters, session: &session, context: context)
        case let .setPassword(password, mode):
            return try await setPassword(password, mode: mode, session: &session, context: context)
        case let .setUser(user):
            return try await setUser(user, session: &session, context: context)
        case let .updatePassword(current, new, mode):
            return try await updatePassword(current: current, new: new, mode: mode, session: &session, context: context)
        case .getAllChallenges:
            return try await getAllChallenges(session: &session, context: context)
        case let .initiateUpdateFlowForCredential(type):
            return try await initiateUpdateFlow(type, session: &session, context: context)
        case let .forgotPassword(user):
            return try await forgotPassword(user, session: &session, context: context)
        case .resendActivationCode:
            return try await resendActivationCode(session: &session, context: context)
        case let .setActivationCode(code):
            return try await setActivationCode(code, session: &session, context: context)
        case let .setLDASignature(kid, signature, authenticatorData):
            return try await setLDASignature(kid: kid, signature: signature, authenticatorData: authenticatorData,
                                             session: &session, context: context)
        case let .setIDVBiometricAssertion(assertion):
            return try await setIDVBiometricAssertion(assertion, session: &session, context: context)
        case let .setUserConsentForLDA(consent):
            return try await setUserConsentForLDA(consent, session: &session, context: context)
        case let .enrollDeviceKey(publicKey, label, fido2):
            return try await enrollDeviceKey(publicKey: publicKey, label: label, fido2: fido2, session: &session, context: context)
        case .logOff:
            return try await logOff(session: &session, context: context)
        case .resetAuthState:
            return resetAuthState(session: &session)
        case .resetAuthenticateUserAndSignDataState:
            if case let .signing(challenge)? = session.pending {
                session.pending = nil
                await releaseIdempotency(challenge.work.idempotency)
            }
            return Reply()
        case let .getPublicKeys(format):
            return try await getPublicKeys(format: format)
        case let .getSignature(signatureID):
            return try await getSignature(signatureID, session: session)
        case .getCheckpoint:
            let checkpoint = try await signing.checkpointer.checkpointNow()
            return Reply(result: ["checkpoint": .string(try await cosigned(checkpoint))])
        case let .getInclusionProof(signatureID, treeSize):
            return try await getInclusionProof(signatureID, treeSize: treeSize.map(Int64.init), session: session)
        case let .getConsistencyProof(fromSize, toSize):
            return try await getConsistencyProof(from: Int64(fromSize), to: toSize.map(Int64.init))
        case let .waitForProof(signatureID, quorum, timeoutSeconds):
            return try await waitForProof(signatureID, quorum: quorum, timeoutSeconds: timeoutSeconds, session: session)
        case .status:
            return Reply(result: try await statusResult(now: now))
        case .listApprovals:
            return try await listApprovals(session: &session, context: context)
        case let .approveRequest(approvalID):
            return try await answerApproval(approvalID, kind: .approve, session: &session, context: context)
        case let .denyRequest(approvalID, reason):
            return try await answerApproval(approvalID, kind: .deny(reason: reason), session: &session, context: context)
        case let .getApproval(approvalID, waitSeconds):
            return try await getApproval(approvalID, waitSeconds: waitSeconds, session: &session, context: context)
        case let .unlockAgent(parameters):
            return try await unlockAgent(parameters, session: &session, context: context)
        case .lockAgent:
            return lockAgent(session: session)
        case let .admin(operation):
            return try await handleAdmin(operation, context: context)
        }
    }

    /// Drops a challenge open longer than `server.challenge_timeout_seconds`; a request that
    /// answers it is error 11. Other requests go on as if none were open.
    private func expireChallenge(_ request: Request, session: inout Session, timeout: Int, now: Date) throws {
        guard let pending = session.pending,
              now.timeIntervalSince(pending.openedAt) > Double(timeout) else { return }
        session.pending = nil
        logger.info("challenge expired", metadata: ["op": "\(request.op)", "peerPID": "\(session.peer.pid)"])
        if Operation.challengeAnswers.contains(request.op) {
            throw StepSignError.wrongState("the challenge expired")
        }
    }
}
