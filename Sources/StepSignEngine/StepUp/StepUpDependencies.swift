import Logging
import StepSignStorage

/// What a ``StepUpAuthenticator`` may use to check an answer or make a fresh challenge, and
/// nothing else of the engine: the attempt rule and the password check, the user records and
/// single-use values of the store, the device keys, the IDV verifier.
///
/// An authenticator neither signs nor changes a credential: the signing flow
/// (`Engine.answerStepUp`) does what its outcome says.
struct StepUpDependencies: Sendable {
    let passwords: PasswordAuthenticator
    let users: any CredentialStore
    let singleUse: any CounterStore
    let deviceKeys: DeviceKeys
    let idvVerifier: IDVAssertionVerifier
    let logger: Logger
}
