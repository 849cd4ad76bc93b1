import NIOConcurrencyHelpers
import StepSignConfig
import StepSignStorage
import struct Foundation.Date

/// The step-up reuse windows of SPEC §3.4: after a step-up at level L, further signing
/// requests of the same user, at a level up to L with the same authenticator type, from the
/// same session (or peer uid), sign without a challenge for `reuse_seconds` and at most
/// `reuse_max_uses` times.
///
/// A window lives here, in memory, and is used up in one step under its lock
/// (``take(user:level:type:scope:credentialToken:now:settings:)``): however many connections
/// race for it, it covers at most its uses. It ends when the user's credentials change (an
/// event of the user is recorded here, device keys too, or a block; on a store shared with
/// other daemons also when the stored ``CredentialToken`` differs: a change on another daemon),
/// when the password it stepped up with expires by age, at `logOff`, and
/// when a reload shortens `reuse_seconds` or `reuse_max_uses`, drops its level from
/// `reuse_levels`, or changes `reuse_scope` (the stricter of the settings it opened under and
/// those in force when it is used decide; a reload never lengthens a window). A restart ends
/// them all.
final class StepUpReuseWindows: Sendable {
    /// Whose requests may use a window.
    enum Scope: Hashable, Sendable {
        case session(UInt64)
        case peer(UInt32)
    }

    /// One window.
    struct Window: Sendable, Equatable {
        var level: Int
        var type: Int
        /// What the step-up used (`password`, `lda`, `idv-biometric`): what the reused
        /// signatures' `authenticatorUsed` says.
        var authenticatorUsed: String
        /// The signature made with the step-up: the reused ones' `stepUp.reusedFrom`.
        var signatureID: String
        /// The user's credentials when it stepped up.
        var credentialToken: CredentialToken
        /// When the password it stepped up with expires by age (`password.max_age_days`); nil:
        /// never. The window ends then.
        var passwordExpiresAt: Date? = nil
        var openedAt: Date
        /// `reuse_seconds` and `reuse_max_uses` when it opened: a reload may shorten a window,
        /// never lengthen it.
        var seconds: Int
        var maxUses: Int
        /// Signatures made in the window so far (besides its own).
        var used = 0
    }

    private struct Key: Hashable {
        var user: String
        var scope: Scope
    }

    private let windows = NIOLockedValueBox<[Key: Window]>([:])

    /// The scope a request of `session` has under `settings`.
    static func scope(of session: Session, settings: StepSignConfiguration.StepUp) -> Scope {
        settings.reuseScope == .session ? .session(session.id) : .peer(session.peer.uid)
    }

    /// Opens `window` for `user` in `scope` (replacing an earlier one there), and forgets the
    /// windows that have ended by time, so that those of closed connections do not pile up:
    /// at most the windows opened within `reuse_seconds` are kept, each one a step-up.
    func open(_ window: Window, user: String, scope: Scope, settings: StepSignConfiguration.StepUp) {
        windows.withLockedValue { windows in
            windows = windows.filter { window.openedAt.timeIntervalSince($0.value.openedAt) < Double($0.value.seconds) }
            windows[Key(user: user, scope: scope)] = window
        }
    }

    /// Uses `user`'s window in `scope` for one signature at `level` with authenticator `type`,
    /// if it is open and covers it; in one step, so a window never covers more than
    /// `reuse_max_uses` signatures. A window found ended is removed. `credentialToken` is the
    /// user's as stored now, when the store is shared with other daemons (nil: this daemon's
    /// events end the window on every change).
    func take(user: String, level: Int, type: Int, scope: Scope, credentialToken: CredentialToken?, now: Date,
              settings: StepSignConfiguration.StepUp) -> Window? {
        let key = Key(user: user, scope: scope)
        return windows.withLockedValue { windows -> Window? in
            guard var window = windows[key] else { return nil }
            let maxUses = min(window.maxUses, settings.reuseMaxUses)
            let ended = credentialToken.map { $0 != window.credentialToken } ?? false
                || window.passwordExpiresAt.map { now >= $0 } ?? false || !settings.reusable(level: window.level)
                || now.timeIntervalSince(window.openedAt) >= Double(min(window.seconds, settings.reuseSeconds))
                || now < window.openedAt || window.used >= maxUses
            if ended {
                windows[key] = nil
                return nil
            }
            guard level >= 1, level <= window.level, type == window.type else { return nil }
            window.used += 1
            windows[key] = window.used >= maxUses ? nil : window
            return window
        }
    }

    /// Ends every window of `user` (an event of the user was recorded).
    func end(user: String) {
        windows.withLockedValue { windows in windows = windows.filter { $0.key.user != user } }
    }

    /// Ends `user`'s window in `scope` (`logOff`).
    func end(user: String, scope: Scope) {
        windows.withLockedValue { $0[Key(user: user, scope: scope)] = nil }
    }

    /// How many windows are open (for tests and bounds).
    var count: Int { windows.withLockedValue { $0.count } }
}
