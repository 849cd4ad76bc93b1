import Foundation
import StepSignClient
import Testing

/// The line protocol of SPEC §3: framing, pipelining, malformed input.
@Suite("Line protocol", .blocking)
struct ProtocolTests {
    @Test("malformed JSON is answered with error 4 and the connection stays open")
    func malformedJSONKeepsConnection() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        try connection.send(Array("{not json\n".utf8))
        let reply = try ClientReply(line: connection.readLine())
        #expect(reply.code == 4)
        #expect(reply.id == .null)
        #expect(try connection.call("status").code == 0)
    }

    @Test("pipelined requests are answered once each, in request order")
    func pipelining() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        var batch = ""
        for id in 1...20 {
            batch += #"{"id":"r\#(id)","op":"status"}"# + "\n"
        }
        try connection.send(Array(batch.utf8))
        for id in 1...20 {
            let reply = try ClientReply(line: connection.readLine())
            #expect(reply.id.stringValue == "r\(id)")
            #expect(reply.code == 0)
        }
    }

    @Test("""
        a client that sends its requests, ends its input (half-close) and reads the replies slowly gets every reply: \
        the daemon writes what is waiting before it closes
        """)
    func halfClosedSlowReaderGetsEveryReply() throws {
        let daemon = try DaemonHarness()
        let client = try RawClient(socketPath: daemon.socketPath)
        var batch: [UInt8] = []
        // More replies than the socket's buffer holds (about 90), fewer than it and the daemon's
        // queue of writes (64 KiB) together: every request is done before the client reads.
        let count = 150
        for id in 1...count {
            batch += Array(#"{"id":\#(id),"op":"authenticateUserAndSignData","user":"alice","payload":"half-\#(id)","reason":"r","authLevel":0,"authenticatorType":0}"#.utf8) + [0x0A]
        }
        try client.send(batch)
        client.shutdownWrite()
        usleep(1_500_000)
        var ids: [Int] = []
        while case let .line(line) = client.next(timeout: 20) {
            let reply = try ClientReply(line: line)
            #expect(reply.code == 0, "\(reply.message)")
            if let id = reply.id.int { ids.append(id) }
            usleep(1_000)
        }
        #expect(ids == Array(1...count), "\(ids.count) replies")
        #expect(try daemon.ledgerSignatures().count == count)
    }

    @Test("a line longer than 64 KiB gets error 4 and the connection is closed")
    func lineLimit() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        let huge = #"{"id":1,"op":"status","x":""# + String(repeating: "a", count: 70_000) + "\"}\n"
        try? connection.send(Array(huge.utf8))
        let reply = try ClientReply(line: connection.readLine())
        #expect(reply.code == 4)
        #expect(throws: ClientError.self) { try connection.readLine(timeout: 10) }
        #expect(try daemon.connect().call("status").code == 0)
    }

    @Test("a request of exactly 64 KiB is read")
    func lineAtLimit() throws {
        let daemon = try DaemonHarness()
        let connection = try daemon.connect()
        let head = #"{"id":1,"op":"authenticateUserAndSignData","user":"alice","payload":"p","reason":"r","authLevel":0,"authenticatorType":0,"pad":""#
        let line = head + String(repeating: "a", count: 65536 - head.utf8.count - 2) + "\"}"
        #expect(line.utf8.count == 65536)
        try connection.send(Array((line + "\n").utf8))
        let reply = try ClientReply(line: connection.readLine())
        #expect(reply.code == 4)  // read and parsed: refused only for the unknown "pad" parameter
        #expect(reply.message.contains("pad"))
    }

    @Test("unknown operations, missing ids and wrong types are error 4", arguments: [
        #"{"id":1,"op":"noSuchThing"}"#,
        #"{"op":"status"}"#,
        #"{"id":[1],"op":"status"}"#,
        #"{"id":1,"op":7}"#,
        #"[1,2,3]"#,
        #"{"id":1,"op":"authenticateUserAndSignData","user":"a","payload":5,"reason":"r","authLevel":0,"authenticatorType":0}"#,
        #"{"id":1,"op":"authenticateUserAndSignData","user":"a","payload":"p","reason":"r","authLevel":"0","authenticatorType":0}"#,
        #"{"id":1,"op":"status","id":2}"#,
    ])
    func invalidRequests(line: String) async throws {
        // Decoding is the engine's: in-process, no daemon (``ScenarioHost``).
        let reply = try await ScenarioHost(.inProcess).connect().exchange(line)
        #expect(reply.code == 4)
        #expect(reply.events.isEmpty)
    }

    @Test("every reply echoes the request's id, numeric or string")
    func idEcho() async throws {
        let connection = try await ScenarioHost(.inProcess).connect()
        #expect(try await connection.exchange(#"{"id":"abc-1","op":"status"}"#).id.stringValue == "abc-1")
        #expect(try await connection.exchange(#"{"id":42,"op":"status"}"#).id.int == 42)
    }
}
