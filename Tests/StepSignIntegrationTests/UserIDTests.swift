import Foundation
import StepSignClient
import Testing

/// User IDs (SPEC §3): 1–64 characters, no control characters, no Unicode format characters
/// (category Cf: zero-width and bidi controls), not blank; else error 4. Names that hide
/// characters would show one thing on a device challenge and mean another.
///
/// The engine decides these before anything reaches a socket or the store, so the checks run
/// in-process (``ScenarioHost``): no daemon is started for them.
@Suite("User IDs", .blocking)
struct UserIDTests {
    static let hiding = [
        "ali\u{200B}ce",          // ZERO WIDTH SPACE
        "alice\u{202E}gpj.exe",   // RIGHT-TO-LEFT OVERRIDE: shows as "aliceexe.jpg"
        "\u{2067}admin\u{2069}",  // RIGHT-TO-LEFT ISOLATE … POP DIRECTIONAL ISOLATE
        "al\u{00AD}ice",          // SOFT HYPHEN (Cf)
        "\u{FEFF}alice",          // BYTE ORDER MARK / ZERO WIDTH NO-BREAK SPACE
    ]

    @Test("admin.addUser refuses a name with a format character (error 4) and adds nothing", arguments: hiding)
    func addUserRefuses(name: String) async throws {
        let host = try await ScenarioHost(.inProcess)
        let reply = try await host.connect().call("admin.addUser", ["user": .string(name), "password": .string(Passwords.initial)])
        #expect(reply.code == 4, "\(reply.message)")
        let users = try await host.connect().call("admin.listUsers").result?["users"]?.arrayValue
        #expect(users?.isEmpty == true)
    }

    @Test("setUser, signing, forgotPassword and admin.enrollDeviceKey refuse the same names with error 4", arguments: hiding)
    func everyOperationRefuses(name: String) async throws {
        let host = try await ScenarioHost(.inProcess)
        let connection = try host.connect()
        #expect(try await connection.call("setUser", ["user": .string(name)]).code == 4)
        for level in [1, 0] {
            #expect(try await connection.call("authenticateUserAndSignData", [
                "user": .string(name), "payload": "p", "reason": "r", "authLevel": .int(Int64(level)), "authenticatorType": 0,
            ]).code == 4)
        }
        let device = try TestDevice()
        #expect(try await connection.call("admin.enrollDeviceKey", ["user": .string(name), "publicKey": .string(device.pem)]).code == 4)
        _ = try await connection.call("setUser", ["user": .string(DaemonHarness.user)])
        #expect(try await connection.call("forgotPassword", ["user": .string(name)]).code == 4)
    }

    @Test("ordinary names still work: letters of any script, digits, dots, @ and -",
          arguments: ["alice", "Émilie", "佐藤", "ops.bot-7@example", String(repeating: "u", count: 64)])
    func ordinaryNames(name: String) async throws {
        let host = try await ScenarioHost(.inProcess)
        let reply = try await host.connect().call("admin.addUser", ["user": .string(name), "password": .string(Passwords.initial)])
        #expect(reply.code == 0, "\(reply.message)")
    }
}
