import StepSignConfig
import StepSignProtocol
import StepSignStorage
import struct Foundation.Date

extension Engine {
    /// The session's login if it still holds at `now`, or nil when the session is not logged in.
    ///
    /// Every request that acts on a login comes through here (SPEC §3): it re-reads the user
    /// (one primary-key read) and, when the login has ended (``LoginEnd``), forgets it and any
    /// open challenge (`session.end()`) and throws error 5. So a login ends on every
    /// connection at once when its user's password changes, expires, or the user is blocked
    /// or removed, and `server.session_max_seconds` after it began in any case.
    ///
    /// - Parameter blocked: the code for a user blocked while the credentials did not change
    ///   (`enrollDeviceKey` answers 148 there, SPEC §3.2); the login ends either way.
    nonisolated(nonsending) func currentLogin(_ session: inout Session, context: RequestContext,
                      blocked: StepSignError.Code = .sessionExpired) async throws -> Session.Login? {
        guard let login = session.login else { return nil }
        return try checkLogin(login, user: try await credentials.store.user(named: login.user), session: &session,
                              context: context, blocked: blocked)
    }

    /// ``currentLogin(_:context:blocked:)`` with the login's user record read already by the
    /// caller (for the same request, so one read serves both).
    func checkLogin(_ login: Session.Login, user: UserRecord?, session: inout Session, context: RequestContext,
                    blocked: StepSignError.Code = .sessionExpired) throws -> Session.Login {
        if let failure = user?.sealFailure { credentials.sealAlarm.report(user: login.user, failure) }
        guard let end = LoginEnd.check(login, user: user, maxSeconds: context.config.server.sessionMaxSeconds, now: context.now) else {
            return login
        }
        session.end()
        logger.info("login ended", metadata: ["user": "\(login.user)", "reason": "\(end)", "peerUID": "\(session.peer.uid)"])
        throw StepSignError(end == .userBlocked ? blocked : .sessionExpired, end.message)
    }

    /// The session's login if it still holds (see ``currentLogin(_:config:now:blocked:)``);
    /// error 11 when the session is not logged in.
    func requireLogin(_ session: inout Session, context: RequestContext,
                      blocked: StepSignError.Code = .sessionExpired) async throws -> Session.Login {
        guard let login = try await currentLogin(&session, context: context, blocked: blocked) else {
            throw StepSignError.wrongState("not logged in")
        }
        return login
    }
}
