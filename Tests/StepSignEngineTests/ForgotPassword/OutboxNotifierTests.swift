import Foundation
@testable import StepSignEngine
import Testing
import StepSignTestSupport

@Suite("Outbox notifier")
struct OutboxNotifierTests {
    static func message(_ user: String = "alice", code: String = "7K9M2P3Q") -> ActivationMessage {
        ActivationMessage(user: user, verificationKey: "maple-otter", activationCode: code,
                          expiresAt: Date(timeIntervalSince1970: 1_748_781_296))
    }

    @Test("each delivery appends exactly one JSON line to outbox/USER")
    func appendsLines() async throws {
        let temp = try TemporaryDirectory("notifier")
        defer { temp.remove() }
        let notifier = OutboxNotifier(stateDirectory: temp.path)
        let first = Self.message(code: "AAAAAAAA")
        let second = Self.message(code: "BBBBBBBB")
        try await notifier.deliver(first)
        try await notifier.deliver(second)
        let text = try temp.read("outbox/alice")
        #expect(text == String(decoding: first.jsonLine + second.jsonLine, as: UTF8.self))
    }

    @Test("the file is 0600 and the directory 0700, also when they existed with wider modes")
    func modes() async throws {
        let temp = try TemporaryDirectory("notifier")
        defer { temp.remove() }
        try FileManager.default.createDirectory(atPath: temp.path + "/outbox", withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o755])
        #expect(FileManager.default.createFile(atPath: temp.path + "/outbox/bob", contents: nil, attributes: [.posixPermissions: 0o644]))
        let notifier = OutboxNotifier(stateDirectory: temp.path)
        try await notifier.deliver(Self.message())
        try await notifier.deliver(Self.message("bob"))
        #expect(try temp.mode("outbox") == 0o700)
        #expect(try temp.mode("outbox/alice") == 0o600)
        #expect(try temp.mode("outbox/bob") == 0o600)
    }

    @Test("user IDs become escaped file names", arguments: [
        ("alice", "alice"),
        ("first.last@example.com", "first.last@example.com"),
        ("..", "%2E."),
        (".", "%2E"),
        (".hidden", "%2Ehidden"),
        ("a/b", "a%2Fb"),
        ("../../etc/passwd", "%2E.%2F..%2Fetc%2Fpasswd"),
        ("-rf", "%2Drf"),
        ("100%", "100%25"),
        ("é", "%C3%A9"),
    ])
    func escaping(user: String, expected: String) {
        #expect(OutboxFileName.escape(user) == expected)
    }

    @Test("a user ID with / or .. stays inside the outbox")
    func traversalStaysInside() async throws {
        let temp = try TemporaryDirectory("notifier")
        defer { temp.remove() }
        let notifier = OutboxNotifier(directory: temp.path + "/state/outbox")
        try FileManager.default.createDirectory(atPath: temp.path + "/state", withIntermediateDirectories: false)
        try await notifier.deliver(Self.message("../evil"))
        try await notifier.deliver(Self.message(".."))
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.path + "/state").sorted() == ["outbox"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.path + "/state/outbox").sorted() == ["%2E.", "%2E.%2Fevil"])
        #expect(notifier.path(for: "../evil") == temp.path + "/state/outbox/%2E.%2Fevil")
    }

    @Test("a user ID too long once escaped is refused")
    func tooLong() async throws {
        let temp = try TemporaryDirectory("notifier")
        defer { temp.remove() }
        let user = String(repeating: "👨‍👩‍👧‍👦", count: 64)
        #expect(OutboxFileName.escape(user) == nil)
        await #expect(throws: OutboxNotifierError.self) {
            try await OutboxNotifier(stateDirectory: temp.path).deliver(Self.message(user))
        }
    }

    @Test("a symlink in place of the user's file is refused and its target left alone")
    func symlinkFile() async throws {
        let temp = try TemporaryDirectory("notifier")
        defer { temp.remove() }
        try FileManager.default.createDirectory(atPath: temp.path + "/outbox", withIntermediateDirectories: false)
        #expect(FileManager.default.createFile(atPath: temp.path + "/target", contents: Data()))
        try FileManager.default.createSymbolicLink(atPath: temp.path + "/outbox/alice", withDestinationPath: temp.path + "/target")
        await #expect(throws: OutboxNotifierError.self) {
            try await OutboxNotifier(stateDirectory: temp.path).deliver(Self.message())
        }
        #expect(try temp.read("target").isEmpty)
    }

    @Test("a symlink in place of the outbox directory is refused")
    func symlinkDirectory() async throws {
        let temp = try TemporaryDirectory("notifier")
        defer { temp.remove() }
        try FileManager.default.createDirectory(atPath: temp.path + "/elsewhere", withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: temp.path + "/outbox", withDestinationPath: temp.path + "/elsewhere")
        await #expect(throws: OutboxNotifierError.self) {
            try await OutboxNotifier(stateDirectory: temp.path).deliver(Self.message())
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.path + "/elsewhere").isEmpty)
    }

    @Test("a FIFO in place of the user's file is refused without blocking")
    func fifo() async throws {
        let temp = try TemporaryDirectory("notifier")
        defer { temp.remove() }
        try FileManager.default.createDirectory(atPath: temp.path + "/outbox", withIntermediateDirectories: false)
        #expect(mkfifo(temp.path + "/outbox/alice", 0o600) == 0)
        await #expect(throws: OutboxNotifierError.self) {
            try await OutboxNotifier(stateDirectory: temp.path).deliver(Self.message())
        }
    }

    @Test("concurrent deliveries give whole lines")
    func concurrent() async throws {
        let temp = try TemporaryDirectory("notifier")
        defer { temp.remove() }
        let notifier = OutboxNotifier(stateDirectory: temp.path)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 { group.addTask { try await notifier.deliver(Self.message()) } }
            try await group.waitForAll()
        }
        let lines = try temp.read("outbox/alice").split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 21)
        #expect(lines.dropLast().allSatisfy { $0 == Substring(String(decoding: Self.message().json, as: UTF8.self)) })
    }
}
