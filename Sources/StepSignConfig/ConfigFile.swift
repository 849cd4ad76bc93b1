#if canImport(Glibc)
import Glibc
#endif
import StepSignSystem

/// Reads the text files the configuration names, with errors a user can act on.
enum ConfigFile {
    /// The UTF-8 text of `path`; errors name `path` and `key`.
    ///
    /// Read with `open(2)` and `read(2)` (``SecureFile/read(_:)``), not Foundation, so that a
    /// failed read keeps its errno: a fault that may pass (EIO, EMFILE, …) is told from a
    /// missing file or a permission (``ConfigError/errno``).
    static func read(_ path: String, key: String?) throws(ConfigError) -> String {
        func fail(_ message: String, errno: Int32? = nil) -> ConfigError {
            ConfigError(file: path, line: nil, key: key, message: message, errno: errno)
        }
        let bytes: [UInt8]
        do {
            bytes = try SecureFile.read(path)
        } catch {
            switch error.errno {
            case ENOENT, ENOTDIR: throw fail("cannot read the file: it does not exist")
            case EISDIR: throw fail("cannot read the file: it is a directory")
            case EACCES, EPERM: throw fail("cannot read the file: permission denied")
            default: throw fail("cannot read the file: \(String(cString: strerror(error.errno)))", errno: error.errno)
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw fail("the file is not UTF-8 text")
        }
        return text
    }
}
