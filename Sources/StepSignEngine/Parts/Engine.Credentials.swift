import StepSignStorage

extension Engine {
    /// The users and how they prove who they are: the part of the engine's state the login,
    /// password, forgot-password, device-key and step-up flows use.
    ///
    /// Its store is the credentials and the counters alone (``CredentialStore``,
    /// ``CounterStore``): a flow that reads or writes the ledger, a signing key or an approval
    /// says so by going through ``Engine/Signing`` or ``Engine/Approvals``.
    final class Credentials: Sendable {
        /// Users, password history, device keys, activation codes; attempt counters and
        /// single-use values.
        let store: any CredentialStore & CounterStore
        /// The attempt rule (SPEC §5.1) and the password check, with its per-uid scrypt queue.
        let passwords: PasswordAuthenticator
        /// The users' device keys as the flows use them.
        let deviceKeys: DeviceKeys
        /// Checks IDV biometric assertions (SPEC §3.4).
        let idvVerifier: IDVAssertionVerifier
        /// Logs records that fail their seal check (SPEC §5.4), once per record.
        let sealAlarm: SealAlarm
        /// Delivers activation codes (forgot password).
        let codeDelivery: CodeDelivery
        /// The step-up reuse windows (SPEC §3.4), in memory; they end when a user's credentials
        /// change or the user is blocked.
        let stepUpReuse: StepUpReuseWindows
        /// The SSH agent's unlock windows (SPEC §3.5), in memory; they end as reuse windows do.
        let sshAgent: SSHAgentWindows
        /// The part of the above a step-up authenticator may use (`StepUp/`).
        let stepUp: StepUpDependencies

        init(store: any CredentialStore & CounterStore, passwords: PasswordAuthenticator, deviceKeys: DeviceKeys,
             idvVerifier: IDVAssertionVerifier, sealAlarm: SealAlarm, codeDelivery: CodeDelivery,
             stepUpReuse: StepUpReuseWindows, sshAgent: SSHAgentWindows = SSHAgentWindows(), stepUp: StepUpDependencies) {
            self.store = store
            self.passwords = passwords
            self.deviceKeys = deviceKeys
            self.idvVerifier = idvVerifier
            self.sealAlarm = sealAlarm
            self.codeDelivery = codeDelivery
            self.stepUpReuse = stepUpReuse
            self.sshAgent = sshAgent
            self.stepUp = stepUp
        }
    }
}
