import StepSignConfig

/// Picks the notifier the configuration asks for.
public enum CodeNotifierFactory {
    /// `CommandNotifier` running `forgot_password.notifier` when it is set, else an
    /// `OutboxNotifier` on `<stateDirectory>/outbox`. `stateDirectory` is passed apart from
    /// `config` because `--state-dir` overrides `server.state_dir`.
    public static func make(
        config: StepSignConfiguration,
        stateDirectory: String,
        timeout: Duration = CommandNotifier.defaultTimeout
    ) -> any CodeNotifier {
        let argv = config.forgotPassword.notifier
        return argv.isEmpty
            ? OutboxNotifier(stateDirectory: stateDirectory)
            : CommandNotifier(argv: argv, timeout: timeout)
    }
}
