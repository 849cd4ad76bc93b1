@testable import StepSignProtocol
import Testing

@Suite("JSON parser")
struct JSONParserTests {
    private func parse(_ text: String) throws -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    @Test("an object keeps its members in order")
    func objectOrder() throws {
        let value = try parse(#"{"b":1,"a":[true,false,null],"c":"x"}"#)
        guard case let .object(members) = value else { Issue.record("not an object"); return }
        #expect(members.map(\.0) == ["b", "a", "c"])
        #expect(value["a"] == [true, false, nil])
    }

    @Test("escapes and surrogate pairs decode")
    func escapes() throws {
        #expect(try parse(#""a\"b\\c\/d\n\t\u00e9\ud83d\ude00""#) == .string("a\"b\\c/d\n\té😀"))
    }

    @Test("integers stay integers; fractions and big numbers become doubles")
    func numbers() throws {
        #expect(try parse("-42") == .int(-42))
        #expect(try parse("1.5") == .double(1.5))
        #expect(try parse("1e3") == .double(1000))
        #expect(try parse("123456789012345678901234567890") == .double(123456789012345678901234567890.0))
    }

    @Test("malformed texts are refused", arguments: [
        "", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "01", "1.", "-", "+1", "tru", "nul",
        "\"unterminated", "{\"a\":1} x", "'single'", "\"tab\there\"", "1e400",
    ])
    func malformed(text: String) {
        #expect(throws: JSONParser.Error.self) { try parse(text) }
    }

    @Test("a duplicate member is refused")
    func duplicateMember() {
        #expect(throws: JSONParser.Error.self) { try parse(#"{"id":1,"id":2}"#) }
    }

    @Test("invalid UTF-8 inside a string is refused")
    func invalidUTF8() {
        let bytes: [UInt8] = Array("\"a".utf8) + [0xC3, 0x28] + Array("\"".utf8)
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse(bytes) }
    }

    @Test("a lone surrogate escape is refused")
    func loneSurrogate() {
        #expect(throws: JSONParser.Error.self) { try parse(#""\ud800""#) }
        #expect(throws: JSONParser.Error.self) { try parse(#""\udc00x""#) }
    }

    @Test("nesting deeper than the limit is refused, at the limit accepted")
    func depth() throws {
        let limit = JSONParser.maxDepth
        _ = try parse(String(repeating: "[", count: limit) + String(repeating: "]", count: limit))
        #expect(throws: JSONParser.Error.self) {
            try parse(String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1))
        }
    }

    @Test("the writer's output parses back to the same value")
    func roundTrip() throws {
        let value: JSONValue = ["s": "quote \" backslash \\ newline \n control \u{01} é", "n": -7, "d": .double(0.25),
                                "a": [1, "two", nil, false], "o": ["k": "v"]]
        #expect(try JSONParser.parse(value.jsonBytes) == value)
    }

    @Test("a duplicate member is found at any depth and after unescaping, and named (RFC 7515 §5.2)")
    func duplicates() throws {
        func duplicate(_ text: String) -> String? {
            do {
                _ = try JSONParser.parse(Array(text.utf8))
                return nil
            } catch {
                return error.duplicateMember
            }
        }
        #expect(duplicate(#"{"sub":"a","x":1,"sub":"b"}"#) == "sub")
        #expect(duplicate(#"{"payload":"a","p\u0061yload":"b"}"#) == "payload")
        #expect(duplicate(#"{"peer":{"uid":1,"uid":2}}"#) == "uid")
        _ = try JSONParser.parse(Array(#"{"a":{"b":1},"b":[{"a":1},{"a":2}],"c":"\"}\ud83d\ude00"}"#.utf8))
        #expect(duplicate(#"{"a":1"#) == nil)
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse(Array(#"{"a":1"#.utf8)) }
    }
}
