import Foundation

/// Reads the text files the configuration names, with errors a user can act on.
enum ConfigFile {
    /// The UTF-8 text of `path`; errors name `path` and `key`.
    static func read(_ path: String, key: String?) throws(ConfigError) -> String {
        func fail(_ message: String) -> ConfigError {
            ConfigError(file: path, line: nil, key: key, message: message)
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw fail("cannot read the file: it does not exist")
        }
        guard !isDirectory.boolValue else {
            throw fail("cannot read the file: it is a directory")
        }
        guard FileManager.default.isReadableFile(atPath: path),
              let data = FileManager.default.contents(atPath: path)
        else {
            throw fail("cannot read the file: permission denied")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw fail("the file is not UTF-8 text")
        }
        return text
    }
}
