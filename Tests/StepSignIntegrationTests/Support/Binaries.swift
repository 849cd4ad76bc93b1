import Foundation

/// Where `swift build` put the executables: beside the test bundle.
enum Binaries {
    static let directory: URL = {
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var candidate = runner.deletingLastPathComponent()
        // The runner may be inside `stepsignPackageTests.xctest/...`; walk up to the products folder.
        while candidate.path != "/" {
            if FileManager.default.isExecutableFile(atPath: candidate.appendingPathComponent("stepsignd").path) {
                return candidate
            }
            candidate = candidate.deletingLastPathComponent()
        }
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return packageRoot.appendingPathComponent(".build/debug")
    }()

    static func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }
}
