import ArgumentParser

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
