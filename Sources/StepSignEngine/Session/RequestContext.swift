import StepSignConfig
import StepSignCrypto
import struct Foundation.Date

/// What one request sees from the moment it is admitted to its reply: one snapshot of the
/// settings in force (so a reload in between cannot make it enforce one policy and show
/// another) and the time it is handled at (injected, so tests can move the clock).
struct RequestContext: Sendable {
    let settings: Engine.Settings
    let now: Date
    /// The peer whose request this is: the `peer` of the events it records (SPEC §5.4).
    let peer: Peer

    /// The configuration in force for this request.
    var config: StepSignConfiguration { settings.config }
    /// The password policy in force for this request, with its common-password list.
    var policy: PasswordPolicyChecker { settings.policy }
    /// The IDV server's keys in force for this request, or nil when IDV is off.
    var idvKeys: TrustedKeys? { settings.idvKeys }

    /// Until when a nonce of a challenge opened by this request must stay used: past that the
    /// challenge has expired anyway.
    var challengeExpiry: Date {
        now.addingTimeInterval(Double(config.server.challengeTimeoutSeconds) + 60)
    }
}
