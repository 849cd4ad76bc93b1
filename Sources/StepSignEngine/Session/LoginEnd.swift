import StepSignStorage
import struct Foundation.Date

/// Why a session's login has ended although nobody logged off (SPEC §3 "A login ... ends"):
/// the rule every request that acts on a login goes through (``Engine/requireLogin(_:config:now:)``).
enum LoginEnd: Sendable, Equatable {
    /// The user was removed (perhaps a new user of the same name was added since).
    case userRemoved
    /// The password changed, an admin expired it, or the user was blocked (the stored
    /// ``CredentialToken`` is not the one the session logged in with).
    case credentialsChanged
    /// The user is blocked now.
    case userBlocked
    /// `server.session_max_seconds` have passed since the login.
    case tooOld

    /// Whether `login` has ended at `now`, given the user's stored record (nil: no such user).
    ///
    /// Checked in this order: removed, credentials, age, block. Every block makes a new
    /// token, so a blocked user's logins normally end as `credentialsChanged`.
    static func check(_ login: Session.Login, user: UserRecord?, maxSeconds: Int, now: Date) -> LoginEnd? {
        guard let user else { return .userRemoved }
        guard user.credentialToken == login.credentialToken else { return .credentialsChanged }
        guard now.timeIntervalSince(login.loggedInAt) < Double(maxSeconds) else { return .tooOld }
        guard !user.isBlocked(at: now) else { return .userBlocked }
        return nil
    }

    /// The reply's message: the session learns that its login ended, and, in general terms, why.
    var message: String {
        switch self {
        case .userRemoved: "the login has ended: the user was removed"
        case .credentialsChanged: "the login has ended: the user's credentials changed (password, expiry or block)"
        case .userBlocked: "the login has ended: the user is blocked"
        case .tooOld: "the login has ended: server.session_max_seconds have passed since it began"
        }
    }
}
