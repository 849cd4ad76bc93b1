import ArgumentParser

/// Where scripts put passwords for the login commands (never argv).
struct PasswordOptions: ParsableArguments {
    @Option(name: .customLong("password-file"), help: ArgumentHelp("Read the current password from a file (first line; - is stdin).", valueName: "file"))
    var passwordFile: String?
    @Option(name: .customLong("password-fd"), help: ArgumentHelp("Read the current password from a file descriptor (one line).", valueName: "fd"))
    var passwordFD: Int32?
    @Option(name: .customLong("new-password-file"), help: ArgumentHelp("Read the new password, if one is asked for, from a file (first line; - is stdin).", valueName: "file"))
    var newPasswordFile: String?
    @Option(name: .customLong("new-password-fd"), help: ArgumentHelp("Read the new password, if one is asked for, from a file descriptor (one line).", valueName: "fd"))
    var newPasswordFD: Int32?

    func validate() throws {
        try SecretSources.validate(["--password-file": passwordFile, "--new-password-file": newPasswordFile],
                                   ["--password-fd": passwordFD, "--new-password-fd": newPasswordFD])
    }

    var current: PasswordReader { PasswordReader(file: passwordFile, descriptor: passwordFD) }
    var new: PasswordReader { NewPasswordOptions.reader(file: newPasswordFile, descriptor: newPasswordFD) }
}
