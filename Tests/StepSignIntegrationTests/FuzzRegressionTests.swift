import Foundation
import StepSignTestSupport
import Testing

/// The fuzz target's inputs replayed by a normal build of `stepsign-fuzz` (no libFuzzer): the
/// seed corpus and every regression input under Tests/Fuzz/ run through the same harness and
/// invariants as `scripts/fuzz` (parser round trip, one JSON reply line per request, the id
/// echoed, no events on a refusal). A crash or a broken invariant exits non-zero.
@Suite("Fuzz regressions", .blocking)
struct FuzzRegressionTests {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz")

    @Test("the seed corpus and every regression input replay without a crash", arguments: ["corpus", "regressions"])
    func replay(directory: String) throws {
        let path = Self.fuzzDirectory.appendingPathComponent(directory).path
        let inputs = try FileManager.default.contentsOfDirectory(atPath: path).filter { !$0.hasPrefix(".") }
        try #require(!inputs.isEmpty, "no inputs in \(path)")
        let result = try Tools.run([Binaries.path("stepsign-fuzz"), path])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("replayed \(inputs.count) inputs"))
    }
}
