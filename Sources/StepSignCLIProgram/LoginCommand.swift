import ArgumentParser

/// `stepsign login`: logs in (replacing an expired password if asked), then logs off.
struct LoginCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Log in to check a password; an expired password is replaced on the way."
    )

    @OptionGroup var global: GlobalOptions
    @Option(help: "The user ID.") var user: String
    @OptionGroup var passwords: PasswordOptions

    func run() throws {
        try runReportingErrors {
            let flow = try LoginFlow.loggedIn(global, user: user, options: passwords)
            print("logged in as \(user)")
            _ = try flow.send("logOff")
        }
    }
}
