import NIOPosix
import StepSignProtocol
import StepSignConfig
import StepSignCrypto
import StepSignFormat
import StepSignStorage
import struct Foundation.Date

extension Engine {
    /// Checks a new password against the policy and the history, and stores it if it passes.
    ///
    /// The history is the current password plus the `password.history` before it. The change is
    /// recorded in the ledger as `event` (SPEC §5.4: `passwordChanged`, or `passwordReset` by
    /// forgot-password).
    func changePassword(user: String, to newPassword: String, context: RequestContext,
                        event: LedgerEvent.Kind = .passwordChanged) async throws -> PasswordChangeOutcome {
        if let violation = context.policy.violation(password: newPassword, userID: user) {
            return .policyViolated(violation)
        }
        let history = try await credentials.store.passwordHistory(user: user, limit: context.config.password.history + 1)
        let parameters = context.config.password.scryptParameters
        let outcome = try await NIOThreadPool.singleton.runIfActive { () throws -> (reused: Bool, hash: String) in
            for old in history where try PasswordHash.verify(password: newPassword, encoded: old) {
                return (true, "")
            }
            return (false, try PasswordHash.make(password: newPassword, parameters: parameters))
        }
        if outcome.reused { return .reused }
        let token = try await credentials.store.setPassword(user: user, hash: outcome.hash, at: context.now, historyLimit: context.config.password.history)
        logger.notice("password changed", metadata: ["user": "\(user)"])
        try await recordEvent(event, user: user, context: context)
        return .changed(token)
    }

    /// Records `kind` for `user` in the ledger, with the request's peer (SPEC §5.4), and returns
    /// its entry.
    @discardableResult
    func recordEvent(_ kind: LedgerEvent.Kind, user: String? = nil, details: [(String, JSONValue)] = [],
                     context: RequestContext) async throws -> LedgerEntry {
        try await signing.events.record(kind, user: user, details: details, peer: context.peer, instance: context.config.instance,
                                        now: context.now)
    }

    /// `info` of a mode-0 challenge.
    func forgotPasswordInfo(_ config: StepSignConfiguration) -> [(String, String)] {
        [("ENABLE_FORGOT_PASSWORD", config.forgotPassword.enabled ? "true" : "false")]
    }

    /// `info` of a challenge that asks for a new password.
    func policyInfo(_ config: StepSignConfiguration) -> [(String, String)] {
        [("RELID_PASSWORD_POLICY", config.password.policy.relidPolicyJSON)]
    }

    /// The user's credential token now, read before a flow checks a credential that will log
    /// the user in (so that a change meanwhile ends that login), or a fresh random one for a
    /// name that is not a user (which never logs in).
    func credentialToken(user: String) async throws -> CredentialToken {
        try await credentials.store.user(named: user)?.credentialToken ?? CredentialToken.random()
    }

    /// A new session ID: 128 random bits, base64url.
    func newSessionID() throws -> String {
        Base64URL.encode(try SecureRandom.bytes(count: 16))
    }

    /// Logs `user` in on `session` at `now`, against the user's credentials as they were
    /// (`token`) when the flow began to check them or, after a password change, as the change
    /// left them: if they have changed since, the login has already ended (``LoginEnd``).
    func logIn(_ user: String, token: CredentialToken, session: inout Session, now: Date) throws -> Event {
        let sessionID = try newSessionID()
        session.pending = nil
        session.login = Session.Login(user: user, sessionID: sessionID, credentialToken: token, loggedInAt: now)
        logger.info("logged in", metadata: ["user": "\(user)", "peerUID": "\(session.peer.uid)"])
        return .onUserLoggedIn(user: user, sessionID: sessionID)
    }
}
