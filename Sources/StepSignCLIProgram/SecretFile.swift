#if canImport(Glibc)
import Glibc
import StepSignSystem
#endif

/// Reads a secret from a file the user names (`--password-file`, `--new-password-file`,
/// `--code-file`, `--device-key`), refusing a file that group or others may open, as ssh
/// refuses a private key (SPEC §8): such a secret has leaked already, or soon will.
///
/// The file is opened (following symbolic links, whose own mode means nothing) and the mode is
/// checked with `fstat` on that descriptor, so the file checked is the file read. `-` (stdin)
/// and `--*-fd` descriptors are not files and are not read here.
enum SecretFile {
    /// The most a secret file may hold: a password line or a PEM key is far smaller, and a
    /// larger file (or an endless one such as a pipe) is not a secret file.
    static let maximumSize = 64 * 1024

    /// The bytes of the file at `path`. `what` names it in messages ("password file",
    /// "device key").
    ///
    /// - Throws: `CLIError` with exit status 2 when the file cannot be opened or read, when its
    ///   mode gives group or others any access (`mode & 0o077 != 0`), naming the file and its
    ///   mode, or when it is larger than ``maximumSize``. Never the file's contents.
    static func read(path: String, what: String) throws(CLIError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw CLIError("cannot read the \(what) \(path): \(Self.reason(errno))", exitCode: CLIError.usage) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw CLIError("cannot read the \(what) \(path): \(Self.reason(errno))", exitCode: CLIError.usage)
        }
        let mode = UInt32(info.st_mode) & 0o7777
        guard mode & 0o077 == 0 else {
            throw CLIError("refusing the \(what) \(path): mode \(Self.octal(mode)) \(Self.exposure(mode)); chmod 600 it",
                           exitCode: CLIError.usage)
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= maximumSize {
            let count = retryingOnEINTR { chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) } }
            guard count >= 0 else { throw CLIError("cannot read the \(what) \(path): \(Self.reason(errno))", exitCode: CLIError.usage) }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<count])
        }
        throw CLIError("the \(what) \(path) is larger than \(maximumSize / 1024) KiB; it is not a secret file", exitCode: CLIError.usage)
    }

    /// What group or others may do with a file of `mode` ("lets others read it").
    static func exposure(_ mode: UInt32) -> String {
        switch (mode & 0o044 != 0, mode & 0o022 != 0) {
        case (true, true): "lets others read and write it"
        case (true, false): "lets others read it"
        case (false, true): "lets others write it"
        case (false, false): "gives others access to it"
        }
    }

    /// `mode` as four octal digits ("0644").
    static func octal(_ mode: UInt32) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    private static func reason(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
