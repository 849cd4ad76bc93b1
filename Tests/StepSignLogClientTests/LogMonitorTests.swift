import StepSignCrypto
import StepSignFormat
import StepSignLogClient
import StepSignProtocol
import Testing

/// The monitor's rules (SPEC §5.6), entry by entry, on JWSs signed here like the daemon signs
/// them: every entry is reported; a JWS of an untrusted key, a broken one, a revoked key's
/// after its revocation, and once events began, a user or key no event brought in, are alarms.
@Suite struct LogMonitorTests {
    struct Log {
        let key = try! P256PrivateKey.generate()
        var kid: String { key.publicKey.thumbprint }
        var peer: SignaturePeer { SignaturePeer(uid: 1000, pid: 42, comm: "release") }
        var next: Int64 = 0

        func signature(user: String, key other: P256PrivateKey? = nil, level: Int = 1) throws -> [UInt8] {
            let signer = other ?? key
            let claims = SignatureClaims(iss: "test", sub: user, jti: try UUIDv7.generate(unixMilliseconds: 1_700_000_000_000),
                                         iat: 1_700_000_000, payload: "p", payloadLength: 1, reason: "r", authLevel: level,
                                         authenticatorType: 0, authenticatorUsed: "password", peer: peer)
            return Array(try StepSignSignature.make(claims: claims, key: signer, kid: signer.publicKey.thumbprint).utf8)
        }

        func event(_ kind: LedgerEvent.Kind, user: String? = nil, details: [(String, JSONValue)] = []) throws -> [UInt8] {
            let event = LedgerEvent(iss: "test", jti: try UUIDv7.generate(unixMilliseconds: 1_700_000_000_000), kind: kind,
                                    user: user, peer: peer, iat: 1_700_000_000, details: details)
            return Array(try event.signed(key: key, kid: kid).utf8)
        }
    }

    static func monitor(_ log: Log, extra: [P256PublicKey] = []) -> LogMonitor {
        LogMonitor(state: MonitorState(), keys: TrustedKeys(keys: [log.key.publicKey] + extra))
    }

    static func alarm(_ body: () throws -> Void) -> MonitorAlarm? {
        do { try body() } catch let alarm as MonitorAlarm { return alarm } catch { Issue.record("\(error)") }
        return nil
    }

    @Test func aLogWithItsEventsIsReportedLineByLine() throws {
        let log = Log()
        var monitor = Self.monitor(log)
        let created = try monitor.check(index: 0, entry: log.event(.signingKeyCreated, details: [("kid", .string(log.kid))]))
        #expect(created["type"]?.stringValue == "event" && created["event"]?.stringValue == "signingKeyCreated")
        _ = try monitor.check(index: 1, entry: log.event(.userAdded, user: "alice"))
        let signed = try monitor.check(index: 2, entry: log.signature(user: "alice"))
        #expect(signed["type"]?.stringValue == "signature" && signed["user"]?.stringValue == "alice")
        #expect(signed["index"]?.intValue == 2 && signed["kid"]?.stringValue == log.kid)
        #expect(signed["peer"]?["comm"]?.stringValue == "release")
        #expect(monitor.state.users == ["alice"] && monitor.state.kids == [log.kid])
    }

    @Test func aUserWithoutItsEventIsAnAlarm() throws {
        let log = Log()
        var monitor = Self.monitor(log)
        _ = try monitor.check(index: 0, entry: log.event(.signingKeyCreated, details: [("kid", .string(log.kid))]))
        let alarm = Self.alarm { _ = try monitor.check(index: 1, entry: log.signature(user: "mallory")) }
        #expect(alarm?.kind == .userWithoutEvent && alarm?.index == 1)
        // At level 0 nobody was authenticated: the name is a label, and needs no event.
        let label = try monitor.check(index: 1, entry: log.signature(user: "build-bot", level: 0))
        #expect(label["authLevel"]?.intValue == 0)
        // A removed user signs no more.
        _ = try monitor.check(index: 1, entry: log.event(.userAdded, user: "bob"))
        _ = try monitor.check(index: 2, entry: log.event(.userRemoved, user: "bob"))
        #expect(Self.alarm { _ = try monitor.check(index: 3, entry: log.signature(user: "bob")) }?.kind == .userWithoutEvent)
    }

    @Test func aTrustedKeyWithoutItsEventIsAnAlarm() throws {
        let log = Log()
        let other = try P256PrivateKey.generate()
        var monitor = Self.monitor(log, extra: [other.publicKey])
        _ = try monitor.check(index: 0, entry: log.event(.signingKeyCreated, details: [("kid", .string(log.kid))]))
        _ = try monitor.check(index: 1, entry: log.event(.userAdded, user: "alice"))
        let alarm = Self.alarm { _ = try monitor.check(index: 2, entry: log.signature(user: "alice", key: other)) }
        #expect(alarm?.kind == .keyWithoutEvent)
        _ = try monitor.check(index: 2, entry: log.event(.signingKeyEndorsed, details: [("kid", .string(other.publicKey.thumbprint))]))
        _ = try monitor.check(index: 3, entry: log.signature(user: "alice", key: other))
    }

    @Test func anUntrustedKeyOrABrokenJWSIsAnAlarm() throws {
        let log = Log()
        var monitor = Self.monitor(log)
        let stranger = try P256PrivateKey.generate()
        #expect(Self.alarm { _ = try monitor.check(index: 0, entry: log.signature(user: "a", key: stranger)) }?.kind == .untrustedKey)
        var broken = try log.signature(user: "a")
        broken[broken.count - 5] = broken[broken.count - 5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(Self.alarm { _ = try monitor.check(index: 0, entry: broken) }?.kind == .badEntry)
        #expect(Self.alarm { _ = try monitor.check(index: 0, entry: [0xff, 0xfe]) }?.kind == .badEntry)
    }

    @Test func aRevokedKeySignsNothingFromItsRevocation() throws {
        let log = Log()
        var monitor = Self.monitor(log)
        _ = try monitor.check(index: 0, entry: log.event(.signingKeyCreated, details: [("kid", .string(log.kid))]))
        _ = try monitor.check(index: 1, entry: log.event(.userAdded, user: "alice"))
        _ = try monitor.check(index: 2, entry: log.event(.signingKeyRevoked, details: [("kid", .string(log.kid))]))
        #expect(Self.alarm { _ = try monitor.check(index: 3, entry: log.signature(user: "alice")) }?.kind == .badEntry)
    }

    @Test func aLogFromBeforeEventsIsTakenAsItComesUntilItsFirstEvent() throws {
        let log = Log()
        var monitor = Self.monitor(log)
        _ = try monitor.check(index: 0, entry: log.signature(user: "legacy"))
        _ = try monitor.check(index: 1, entry: log.event(.configurationLoaded))
        _ = try monitor.check(index: 2, entry: log.signature(user: "legacy"))
        #expect(Self.alarm { _ = try monitor.check(index: 3, entry: log.signature(user: "newcomer")) }?.kind == .userWithoutEvent)
    }

    @Test func theStateReadsBackAsWritten() throws {
        let log = Log()
        var monitor = Self.monitor(log)
        _ = try monitor.check(index: 0, entry: log.event(.signingKeyCreated, details: [("kid", .string(log.kid))]))
        _ = try monitor.check(index: 1, entry: log.event(.userAdded, user: "alice"))
        var state = monitor.state
        state.origin = "test.example/log"
        for n in 0..<5 { _ = state.frontier.append(leafHash: MerkleHash.leaf([UInt8(n)])) }
        state.revokedAt = ["k": 4]
        #expect(try MonitorState(json: JSONParser.parse(state.json.jsonBytes)) == state)
    }
}
