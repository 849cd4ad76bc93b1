import StepSignCrypto
import StepSignProtocol

/// An enrolled LDA device key as the step-up of a signing (`getLDASignature` mode 12): one of
/// the user's active keys must sign exactly the challenge's bytes, whose nonce is used once.
///
/// A client whose device cannot answer may fall back to the password (`setPassword` mode 12).
struct DeviceKeyStepUp: StepUpAuthenticator {
    var challenge: DeviceChallenge

    var used: String { "lda" }

    func event(for subject: StepUpSubject, attemptsLeft: Int, status: Status) -> Event {
        .getLDASignature(user: subject.user, challengeMode: .stepUpForSigning, challenge: Base64URL.encode(challenge.bytes),
                         deviceKeys: challenge.deviceKeyIDs, attemptsLeft: attemptsLeft, status: status, manifest: subject.manifest)
    }

    func answerer(for answer: StepUpAnswer) -> (any StepUpAuthenticator)? {
        switch answer {
        case .deviceSignature: self
        case .password: PasswordStepUp()
        case .idvAssertion: nil
        }
    }

    func check(_ answer: StepUpAnswer, for subject: StepUpSubject, using dependencies: StepUpDependencies,
               context: RequestContext) async throws -> StepUpOutcome {
        guard case let .deviceSignature(kid, signature, authenticatorData) = answer else {
            throw StepSignError.wrongState("the open challenge is not a device key challenge")
        }
        guard context.config.lda.enabled else { throw StepSignError(.notSupported, "device keys are disabled (lda.enabled)") }
        let outcome = try await dependencies.passwords.checkWithAttempt(user: subject.user, context: context,
                                                                        logger: dependencies.logger) {
            // A security key (SPEC §5.7) answers with its authenticatorData; a plain key without.
            if try await dependencies.deviceKeys.isFIDO2(kid: kid) {
                guard let authenticatorData else { return "security key \(kid) answered without authenticatorData" }
                return try await dependencies.deviceKeys.fido2AssertionProblem(
                    signature: signature, authenticatorData: authenticatorData, kid: kid, challenge: challenge,
                    user: subject.user, config: context.config, expiresAt: context.challengeExpiry, now: context.now)
            }
            guard authenticatorData == nil else { return "device key \(kid) is not a security key" }
            guard try await dependencies.deviceKeys.isValidSignature(signature, kid: kid, challenge: challenge,
                                                                     user: subject.user, config: context.config),
                  try await dependencies.singleUse.useOnce("lda-nonce:" + challenge.nonce,
                                                           expiresAt: context.challengeExpiry, now: context.now)
            else { return "device signature rejected (key \(kid))" }
            return nil
        }
        return StepUpOutcome(outcome)
    }

    /// A fresh device challenge, or the password when no device key is left (all revoked
    /// meanwhile).
    func retry(for subject: StepUpSubject, using dependencies: StepUpDependencies,
               context: RequestContext) async throws -> (any StepUpAuthenticator)? {
        try await dependencies.deviceKeys.challenge(for: subject, peer: context.peer, config: context.config)
            .map { DeviceKeyStepUp(challenge: $0) } ?? PasswordStepUp()
    }
}

/// An LDA challenge: the exact bytes a device must sign, and the keys that may sign them.
struct DeviceChallenge: Sendable, Equatable {
    /// The nonce inside `bytes`, used once (SPEC §5.1).
    var nonce: String
    var bytes: [UInt8]
    var deviceKeyIDs: [String]
}
