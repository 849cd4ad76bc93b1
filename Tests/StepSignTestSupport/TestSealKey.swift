import Foundation

/// The seal key of the credential records (SPEC §5.4) the PostgreSQL tests' daemons share, as
/// an operator gives every host the same `storage.seal_key_file`: one line of base64url in a
/// 0600 file of a 0700 directory, made once per test process and removed when it exits.
public enum TestSealKey {
    /// The file's path.
    public static let file: String = {
        let directory = NSTemporaryDirectory() + "stepsign-test-seal-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false,
                                                 attributes: [.posixPermissions: 0o700])
        let path = directory + "/seal.key"
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
        let line = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "") + "\n"
        _ = FileManager.default.createFile(atPath: path, contents: Data(line.utf8), attributes: [.posixPermissions: 0o600])
        atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "stepsign-test-seal-\(getpid())") }
        return path
    }()

    /// The `[storage]` line that names it.
    public static var configLine: String { "seal_key_file = \"\(file)\"" }
}
