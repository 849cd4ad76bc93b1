import NIOConcurrencyHelpers
import StepSignStorage
import struct Foundation.Date

/// The SSH agent's unlock windows (SPEC §3.5): after `unlockAgent` stepped user U up from a
/// peer uid, the agent signs as U for that uid's connections, for at most the window's seconds
/// and uses. One window per peer uid: a new unlock replaces the old one.
///
/// A window lives here, in memory, and is used up in one step under its lock
/// (``take(uid:credentialToken:now:maxUses:)``): however many agent connections race for it,
/// it covers at most its uses. It ends at `lockAgent`, when an event of its user is recorded
/// (a password change, a block, a device key change: the events that end a reuse window,
/// §3.4), at `logOff` of its user by its uid, when the password it stepped up with expires, and
/// at a restart. A reload that lowers `[ssh_agent] max_uses` or `unlock_seconds` applies to
/// open windows (never lengthens one).
final class SSHAgentWindows: Sendable {
    /// One window.
    struct Window: Sendable, Equatable {
        /// Whom the agent signs as.
        var user: String
        var level: Int
        var type: Int
        /// What the unlock's step-up used: the agent signatures' `authenticatorUsed`.
        var authenticatorUsed: String
        /// The unlock's own signature ID: the agent signatures' `stepUp.reusedFrom`.
        var signatureID: String
        /// The user's credentials when they stepped up.
        var credentialToken: CredentialToken
        /// When the password it stepped up with expires by age; nil: never.
        var passwordExpiresAt: Date?
        var openedAt: Date
        var seconds: Int
        var maxUses: Int
        /// Agent signatures made in it so far.
        var used = 0
    }

    /// Why the agent has no window to sign in.
    enum Refusal: Error, Equatable, CustomStringConvertible {
        /// No `stepsign unlock` from this uid (or it was locked, logged off, replaced).
        case none
        /// Its time is over.
        case expired
        /// Its signatures are used up.
        case usedUp
        /// The user's credentials changed since the unlock.
        case credentialsChanged

        var description: String {
            switch self {
            case .none: "no unlock window for this uid (stepsign unlock)"
            case .expired: "the unlock window is over"
            case .usedUp: "the unlock window's signatures are used up ([ssh_agent] max_uses)"
            case .credentialsChanged: "the user's credentials changed since the unlock"
            }
        }
    }

    private let windows = NIOLockedValueBox<[UInt32: Window]>([:])

    /// Opens `window` for `uid`, replacing the one it had, and forgets windows over by time.
    func open(_ window: Window, uid: UInt32) {
        windows.withLockedValue { windows in
            windows = windows.filter { window.openedAt.timeIntervalSince($0.value.openedAt) < Double($0.value.seconds) }
            windows[uid] = window
        }
    }

    /// Uses `uid`'s window for one signature if it is open: in one step, so a window never
    /// covers more than its uses. `credentialToken` is the user's as stored now (nil: the user
    /// is gone or blocked); `maxUses` and `seconds` are the settings in force (the lower of
    /// them and the window's own apply). A window found ended is removed.
    func take(uid: UInt32, credentialToken: CredentialToken?, now: Date, maxUses: Int, seconds: Int) -> Result<Window, Refusal> {
        windows.withLockedValue { windows -> Result<Window, Refusal> in
            guard var window = windows[uid] else { return .failure(.none) }
            let refusal: Refusal? =
                if credentialToken != window.credentialToken || window.passwordExpiresAt.map({ now >= $0 }) ?? false {
                    .credentialsChanged
                } else if now < window.openedAt || now.timeIntervalSince(window.openedAt) >= Double(min(window.seconds, seconds)) {
                    .expired
                } else if window.used >= min(window.maxUses, maxUses) {
                    .usedUp
                } else {
                    nil
                }
            if let refusal {
                windows[uid] = nil
                return .failure(refusal)
            }
            window.used += 1
            windows[uid] = window
            return .success(window)
        }
    }

    /// Ends `uid`'s window (`lockAgent`); whether there was one.
    @discardableResult
    func end(uid: UInt32) -> Bool {
        windows.withLockedValue { $0.removeValue(forKey: uid) != nil }
    }

    /// Ends `uid`'s window if it signs as `user` (`logOff`).
    func end(uid: UInt32, user: String) {
        windows.withLockedValue { windows in
            if windows[uid]?.user == user { windows[uid] = nil }
        }
    }

    /// Ends every window of `user` (an event of the user was recorded).
    func end(user: String) {
        windows.withLockedValue { windows in windows = windows.filter { $0.value.user != user } }
    }

    /// `uid`'s window, if one is open (for tests).
    func window(uid: UInt32) -> Window? { windows.withLockedValue { $0[uid] } }
}
