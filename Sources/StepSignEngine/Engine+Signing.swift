import StepSignConfig
import struct Foundation.Date

extension Engine {
    /// `authenticateUserAndSignData` (SPEC §3.2): checks, then one step-up challenge or the result.
    func authenticateUserAndSignData(_ request: Request, session: inout Session, config: StepSignConfiguration,
                                     now: Date) async throws -> Reply {
        try request.allowOnly(["payload", "reason", "authLevel", "authenticatorType", "user"])
        let payload = try request.string("payload")
        let reason = try request.string("reason")
        let level = try request.int("authLevel", in: 0...100)
        let type = try request.int("authenticatorType", in: 0...100)
        let named = try request.optionalString("user")
        try SigningRequest.validate(text: payload, name: "payload", limit: SigningRequest.payloadLimit)
        try SigningRequest.validate(text: reason, name: "reason", limit: SigningRequest.reasonLimit)
        let user: String
        if let login = session.login {
            guard named == nil || named == login.user else {
                throw StepSignError.invalid("\"user\" must be absent or the logged-in user")
            }
            user = login.user
        } else {
            guard let named else { throw StepSignError.invalid("missing parameter \"user\" (the session is not logged in)") }
            try UserName.validate(named)
            user = named
        }
        guard session.pending == nil else {
            throw StepSignError(.authenticationInProgress, "another authentication is already in progress in this session")
        }
        let signing = SigningRequest(user: user, payload: payload, reason: reason, authLevel: level, authenticatorType: type)

        switch try AuthenticationMatrix.requirement(level: level, type: type) {
        case .none:
            guard config.signing.allowLevel0 else {
                throw StepSignError(.notSupported, "level 0 signing is disabled (signing.allow_level_0)")
            }
            return try await finishSigning(signing, authenticatorUsed: "none", request: request, session: &session, config: config)
        case .strongestEnrolled:
            guard let attemptsLeft = try await passwords.attemptsLeft(user: user, config: config, now: now) else {
                throw StepSignError(.userBlocked, "the user is blocked")
            }
            session.pending = .signing(SigningChallenge(request: signing, authenticator: .password, openedAt: now))
            return Reply(id: request.id, events: [
                .getPassword(user: user, challengeMode: .stepUpForSigning, attemptsLeft: attemptsLeft, status: .success, info: []),
            ])
        case .idvBiometric:
            throw StepSignError(.notSupported, "IDV biometric step-up is not configured (idv.issuer)")
        }
    }

    /// `setPassword` mode 12: the password step-up of a signing.
    func answerSigningPassword(_ password: String, challenge: SigningChallenge, request: Request, session: inout Session,
                               config: StepSignConfiguration, now: Date) async throws -> Reply {
        let signing = challenge.request
        switch try await passwords.verify(user: signing.user, password: password, config: config, now: now) {
        case .accepted:
            session.pending = nil
            return try await finishSigning(signing, authenticatorUsed: "password", request: request, session: &session, config: config)
        case let .rejected(attemptsLeft):
            logger.info("step-up password rejected", metadata: ["user": "\(signing.user)", "attemptsLeft": "\(attemptsLeft)"])
            return Reply(id: request.id, events: [
                .getPassword(user: signing.user, challengeMode: .stepUpForSigning, attemptsLeft: attemptsLeft,
                             status: .authenticationFailed(attemptsLeft: attemptsLeft), info: []),
            ])
        case .exhausted:
            session.pending = nil
            logger.warning("step-up attempts exhausted, user blocked", metadata: ["user": "\(signing.user)"])
            return Reply(id: request.id, events: [
                .onAuthenticateUserAndSignData(details: signing.details(authenticatorUsed: "password"), status: .attemptsExhausted),
            ])
        }
    }

    /// Signs, waits for the durable ledger row, and answers `onAuthenticateUserAndSignData`.
    private func finishSigning(_ signing: SigningRequest, authenticatorUsed: String, request: Request,
                               session: inout Session, config: StepSignConfiguration) async throws -> Reply {
        let (details, entry) = try await signer.sign(signing, instance: config.instance,
                                                     authenticatorUsed: authenticatorUsed, peer: session.peer)
        session.signatureIDs.insert(details.dataSignatureID)
        logger.notice("signed", metadata: [
            "user": "\(signing.user)", "signatureID": "\(details.dataSignatureID)", "kid": "\(entry.kid)",
            "seq": "\(entry.seq)", "authLevel": "\(signing.authLevel)", "authenticatorUsed": "\(authenticatorUsed)",
            "peerUID": "\(session.peer.uid)", "peerPID": "\(session.peer.pid)", "peerComm": "\(session.peer.comm)",
        ])
        return Reply(id: request.id, events: [.onAuthenticateUserAndSignData(details: details, status: .success)])
    }
}
