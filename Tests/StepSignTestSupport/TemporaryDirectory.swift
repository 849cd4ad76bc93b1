import Foundation

/// Scratch space for tests, one way: `stepsign-PURPOSE-UUID` under the system's temporary
/// directory, made with an explicit mode whatever the umask (the daemon's strict modes, SPEC
/// §7, refuse directories group or others may write), removed by the test that made it.
public struct TemporaryDirectory: Sendable {
    /// The directory's path.
    public let path: String

    /// The directory as a file URL.
    public var url: URL { URL(fileURLWithPath: path, isDirectory: true) }

    /// Makes a new empty directory named for `purpose` with `mode` (`0o700` for anything
    /// private, such as a child's stdin).
    public init(_ purpose: String, mode: Int = 0o755) throws {
        path = Self.path(purpose)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: mode])
    }

    /// A fresh path named for `purpose` that nothing exists at yet: for code under test that
    /// makes its own directory (a store's state directory, a keyring).
    public static func path(_ purpose: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("stepsign-\(purpose)-\(UUID().uuidString)").path
    }

    /// The path of `name` inside the directory.
    public func appending(_ name: String) -> String {
        path + "/" + name
    }

    /// Removes the directory and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
