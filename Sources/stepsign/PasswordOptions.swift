import ArgumentParser

/// Where scripts put passwords for the login commands (never argv).
struct PasswordOptions: ParsableArguments {
    @Option(name: .customLong("password-file"), help: "Read the current password from a file (first line).")
    var passwordFile: String?
    @Option(name: .customLong("password-fd"), help: "Read the current password from a file descriptor.")
    var passwordFD: Int32?
    @Option(name: .customLong("new-password-file"), help: "Read the new password from a file (first line).")
    var newPasswordFile: String?

    var current: PasswordReader { PasswordReader(file: passwordFile, descriptor: passwordFD) }
    var new: PasswordReader { PasswordReader(file: newPasswordFile, descriptor: nil) }
}
