#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import StepSignCrypto
import Testing
@testable import StepSignDaemonProgram

/// The journal's native protocol as systemd documents it ("Native Journal Protocol"): fields
/// `NAME=value\n`, a value with a newline as `NAME\n` + 64-bit little-endian length + bytes +
/// `\n`; checked on a datagram socket of our own standing in for journald's, then parsed here.
@Suite("journald's native protocol")
struct JournalLogHandlerTests {
    /// Parses a datagram into its fields, in order.
    static func fields(_ data: [UInt8]) -> [(String, [UInt8])] {
        var out: [(String, [UInt8])] = []
        var index = 0
        while index < data.count {
            let end = data[index...].firstIndex { $0 == 0x0A || $0 == UInt8(ascii: "=") }!
            let name = String(decoding: data[index..<end], as: UTF8.self)
            if data[end] == UInt8(ascii: "=") {
                let newline = data[(end + 1)...].firstIndex(of: 0x0A)!
                out.append((name, Array(data[(end + 1)..<newline])))
                index = newline + 1
            } else {
                var length: UInt64 = 0
                for (shift, byte) in data[(end + 1)..<(end + 9)].enumerated() { length |= UInt64(byte) << (8 * UInt64(shift)) }
                let start = end + 9
                out.append((name, Array(data[start..<start + Int(length)])))
                #expect(data[start + Int(length)] == 0x0A)
                index = start + Int(length) + 1
            }
        }
        return out
    }

    @Test("a signature's line carries MESSAGE (the logfmt line), PRIORITY, MESSAGE_ID and STEPSIGN_ fields")
    func fieldsOfASignedLine() {
        let data = JournalLogHandler.datagram(line: Array("ts=… level=notice msg=signed user=alice".utf8), level: .notice,
                                              message: "signed",
                                              metadata: ["user": "alice", "signatureID": "01a2", "peerUID": "1000"])
        let fields = Self.fields(data)
        let byName = Dictionary(fields.map { ($0.0, String(decoding: $0.1, as: UTF8.self)) }, uniquingKeysWith: { a, _ in a })
        #expect(byName["MESSAGE"] == "ts=… level=notice msg=signed user=alice")
        #expect(byName["PRIORITY"] == "5" && byName["SYSLOG_IDENTIFIER"] == "stepsignd")
        #expect(byName["MESSAGE_ID"] == Hex.encode(SHA256.hash(Array("stepsign/signed".utf8)).prefix(16)))
        #expect(byName["MESSAGE_ID"]?.count == 32)
        #expect(byName["STEPSIGN_SIGNATURE_ID"] == "01a2" && byName["STEPSIGN_USER"] == "alice" && byName["STEPSIGN_PEER_UID"] == "1000")
    }

    @Test("a value with newlines (a checkpoint's note) travels in the binary form, whole")
    func multiLineValues() {
        let note = "stepsign.host/a\n2\nroot=\n\n— stepsign.host/a sig\n"
        let fields = Self.fields(JournalLogHandler.datagram(line: Array("x".utf8), level: .info, message: "log checkpoint",
                                                            metadata: ["checkpoint": .string(note)]))
        #expect(fields.first { $0.0 == "STEPSIGN_CHECKPOINT" }.map { String(decoding: $0.1, as: UTF8.self) } == note)
    }

    @Test("metadata keys become journal field names; keys that cannot are left out")
    func fieldNames() {
        #expect(JournalLogHandler.fieldName("signatureID") == "STEPSIGN_SIGNATURE_ID")
        #expect(JournalLogHandler.fieldName("peerUID") == "STEPSIGN_PEER_UID")
        #expect(JournalLogHandler.fieldName("user") == "STEPSIGN_USER")
        #expect(JournalLogHandler.fieldName("authLevel") == "STEPSIGN_AUTH_LEVEL")
        #expect(JournalLogHandler.fieldName("bad-key") == nil && JournalLogHandler.fieldName("") == nil)
    }

    @Test("records reach the socket as datagrams; without one the line goes to stderr")
    func sendsToTheSocket() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/socket"
        let server = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(server) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(server, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        let journal = try #require(JournalSocket(path: path))
        var logger = Logger(label: "t") { label in JournalLogHandler(label: label, journal: journal) }
        logger.logLevel = .info
        logger.notice("signed", metadata: ["signatureID": "abc"])
        var buffer = [UInt8](repeating: 0, count: 65536)
        let received = recv(server, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        #expect(received > 0)
        let fields = Self.fields(Array(buffer.prefix(max(0, received))))
        #expect(fields.contains { $0.0 == "STEPSIGN_SIGNATURE_ID" && $0.1 == Array("abc".utf8) })
        #expect(!JournalSocket(path: directory + "/absent")!.send(Array("MESSAGE=x\n".utf8)))
    }
}
