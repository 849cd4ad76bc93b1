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

/// Checks shared by every command that reads secrets: one source per secret.
enum SecretSources {
    /// Fails when a secret has both a file and a descriptor.
    static func validate(_ files: KeyValuePairs<String, String?>, _ descriptors: KeyValuePairs<String, Int32?>) throws {
        for ((fileOption, file), (fdOption, fd)) in zip(files, descriptors) where file != nil && fd != nil {
            throw ValidationError("\(fileOption) and \(fdOption) cannot be used together")
        }
        for (option, fd) in descriptors {
            if let fd, fd < 0 { throw ValidationError("\(option) must be a file descriptor (0 or more)") }
        }
    }
}
