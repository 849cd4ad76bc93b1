@testable import StepSignProtocol
import Testing

@Suite("Request decoding")
struct RequestTests {
    private func decode(_ text: String) -> Result<Request, RequestDecodingError> {
        Request.decode(Array(text.utf8))
    }

    @Test("a request has an id, an op and its parameters")
    func decodes() throws {
        let request = try decode(#"{"id":"x","op":"status","a":1}"#).get()
        #expect(request.id == "x")
        #expect(request.op == "status")
        #expect(request.members.count == 3)
    }

    @Test("a request without a usable id is refused with id null")
    func missingID() {
        guard case let .failure(failure) = decode(#"{"op":"status"}"#) else { Issue.record("accepted"); return }
        #expect(failure.id == .null)
        #expect(failure.error.code == .invalidArguments)
    }

    @Test("a request without an op is refused but echoes its id")
    func missingOp() {
        guard case let .failure(failure) = decode(#"{"id":7}"#) else { Issue.record("accepted"); return }
        #expect(failure.id == .int(7))
    }

    @Test("a parameter of the wrong type names itself in the error")
    func wrongType() throws {
        let request = try decode(#"{"id":1,"op":"x","payload":5}"#).get()
        #expect(throws: StepSignError.invalid("\"payload\" must be a string")) { try request.string("payload") }
    }

    @Test("an integer outside its range is refused")
    func intRange() throws {
        let request = try decode(#"{"id":1,"op":"x","authLevel":1e20}"#).get()
        #expect(throws: StepSignError.self) { try request.int("authLevel", in: 0...100) }
    }

    @Test("unknown parameters are refused by name")
    func unknownParameter() throws {
        let request = try decode(#"{"id":1,"op":"status","verbose":true}"#).get()
        #expect(throws: StepSignError.invalid("unknown parameter \"verbose\" for status")) { try request.allowOnly([]) }
    }

    @Test("a reply line is one JSON object ending in a newline")
    func replyLine() throws {
        let line = Reply(id: 3, error: StepSignError(.wrongState, "no challenge"), events: []).line
        #expect(line.last == 0x0A)
        #expect(line.dropLast().contains(0x0A) == false)
        let parsed = try JSONParser.parse(line.dropLast())
        #expect(parsed["error"]?["code"] == .int(11))
        #expect(parsed["events"] == .array([]))
    }
}
