import Foundation
import Testing
@testable import StepSignConfig

/// What `stepsignd --check` reads from the file: every problem, not only the first, and the
/// line of any key, for problems found in the files the keys name.
@Suite("Configuration: every problem, and each key's line")
struct ConfigProblemsTests {
    private func problems(_ text: String) throws -> [ConfigError] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString).toml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return StepSignConfiguration.problems(contentsOf: path).map { problem in
            var problem = problem
            problem.file = "c.toml"
            return problem
        }
    }

    @Test("a good file has none")
    func goodFile() throws {
        #expect(try problems("instance = \"x\"\n[password]\nmax_attempts = 5\n").isEmpty)
    }

    @Test("each refused key is reported once, with its line, and the rest is still read")
    func everyKey() throws {
        let text = """
            [signing]
            allow_level_zero = true
            [password]
            max_attempts = 0
            [password.policy]
            minL = 70
            [[witness]]
            name = "w"
            url = "ftp://w"
            key = "w+abcd1234+BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
            [nonsense]
            """
        let found = try problems(text)
        #expect(found.compactMap(\.key).sorted()
                == ["nonsense", "password.max_attempts", "password.policy.minL", "signing.allow_level_zero", "witness[1].url"])
        #expect(found.compactMap(\.line).sorted() == [2, 4, 6, 9, 11])
        // The first is the one the start reports.
        let first = try #require(found.first)
        #expect(throws: first) { try StepSignConfiguration.parse(text, file: "c.toml") }
    }

    @Test("a syntax error is the only problem: nothing after it can be read")
    func syntaxError() throws {
        let found = try problems("[password]\nmax_attempts = 0\nbroken = \"\n")
        #expect(found.count == 1)
        #expect(found.first?.line == 3 && found.first?.key == nil)
    }

    @Test("a key's line, in tables, dotted tables and [[arrays]]; nil when the file does not set it")
    func keyLines() {
        let lines = ConfigKeyLines(text: """
            instance = "x"
            [storage]
            backend = "postgresql"
            [storage.postgresql]
            host = "/run/postgresql"
            [[witness]]
            name = "a"
            [[witness]]
            name = "b"
            key = "k"
            """)
        #expect(lines.line(of: "instance") == 1)
        #expect(lines.line(of: "storage.postgresql.host") == 5)
        #expect(lines.line(of: "storage.postgresql") == 4)
        #expect(lines.line(of: "witness[2].key") == 10)
        #expect(lines.line(of: "witness[1].key") == nil)
        #expect(lines.line(of: "witness[3].name") == nil)
        #expect(lines.line(of: "server.state_dir") == nil)
        #expect(ConfigKeyLines(text: "not = [toml").line(of: "not") == nil)
    }
}
