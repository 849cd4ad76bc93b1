import ArgumentParser

/// Where a script puts the new password of `forgot-password` (never argv).
struct NewPasswordOptions: ParsableArguments {
    @Option(name: .customLong("new-password-file"), help: ArgumentHelp("Read the new password from a file (first line; - is stdin).", valueName: "file"))
    var newPasswordFile: String?
    @Option(name: .customLong("new-password-fd"), help: ArgumentHelp("Read the new password from a file descriptor (one line).", valueName: "fd"))
    var newPasswordFD: Int32?

    func validate() throws {
        try SecretSources.validate(["--new-password-file": newPasswordFile], ["--new-password-fd": newPasswordFD])
    }

    var reader: PasswordReader { Self.reader(file: newPasswordFile, descriptor: newPasswordFD) }

    static func reader(file: String?, descriptor: Int32?) -> PasswordReader {
        PasswordReader(file: file, descriptor: descriptor, what: "new password",
                       options: "--new-password-file or --new-password-fd")
    }
}
