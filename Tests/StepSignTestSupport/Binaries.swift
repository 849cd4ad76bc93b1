import Foundation

/// Finds the executables SwiftPM built next to the test bundle.
///
/// Under `swift test` on Linux the tests run inside `<products>/<package>PackageTests.xctest`
/// (an executable), so its directory — `CommandLine.arguments[0]`'s, or `Bundle.main`'s —
/// is the products directory (`.build/debug`, or `<scratch-path>/debug`) that also holds the
/// package's executables. `STEPSIGN_BIN_DIR` overrides this, for running the tests against an
/// installed build.
public enum Binaries {
    /// The products directory, or nil if no candidate holds the executables.
    public static let productsDirectory: URL? = {
        var candidates: [URL] = []
        if let dir = ProcessInfo.processInfo.environment["STEPSIGN_BIN_DIR"] {
            candidates.append(URL(fileURLWithPath: dir))
        }
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        candidates.append(runner.deletingLastPathComponent())
        candidates.append(Bundle.main.bundleURL)
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        if let executable = Bundle.main.executableURL { candidates.append(executable.deletingLastPathComponent()) }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            candidates.append(bundle.bundleURL.deletingLastPathComponent())
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("stepsignd").path) }
    }()

    /// The built `stepsign-verify`; fails the calling test with a hint when it is missing.
    public static func stepsignVerify() throws -> URL {
        guard let dir = productsDirectory else {
            throw MissingBinary(description: "stepsign-verify not found next to the test runner (\(CommandLine.arguments[0])); run `swift build` first or set STEPSIGN_BIN_DIR")
        }
        return dir.appendingPathComponent("stepsign-verify")
    }

    public struct MissingBinary: Error, CustomStringConvertible {
        public let description: String
    }

    /// The path of the built executable `name` (a path under `.build/debug` if none was found,
    /// so the failure names it).
    public static func path(_ name: String) -> String {
        (productsDirectory ?? URL(fileURLWithPath: ".build/debug")).appendingPathComponent(name).path
    }
}
