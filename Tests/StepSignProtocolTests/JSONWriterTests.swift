import StepSignProtocol
import Testing

@Suite("JSON writer")
struct JSONWriterTests {
    @Test("nested arrays and objects are separated by exactly one comma")
    func nesting() throws {
        let value: JSONValue = [
            "users": [["user": "alice", "keys": []], ["user": "bob", "keys": ["k1", "k2"]], [:]],
            "matrix": [[1, 2], [], [[3]]],
            "last": nil,
        ]
        #expect(value.jsonText
            == #"{"users":[{"user":"alice","keys":[]},{"user":"bob","keys":["k1","k2"]},{}],"matrix":[[1,2],[],[[3]]],"last":null}"#)
        #expect(try JSONParser.parse(value.jsonBytes) == value)
    }

    @Test("streamed members and values mix: keys, nested objects, arrays, JSON values")
    func streaming() {
        var writer = JSONWriter(capacity: 64)
        writer.beginObject()
        writer.member("a", 1)
        writer.key("b")
        writer.beginObject()
        writer.member("c", "d\n")
        writer.endObject()
        writer.key("e")
        writer.beginArray()
        writer.value(["f": true])
        writer.value(2)
        writer.endArray()
        writer.member("g", false)
        writer.member("h", ["i": [nil]])
        writer.endObject()
        #expect(String(decoding: writer.bytes, as: UTF8.self)
            == #"{"a":1,"b":{"c":"d\n"},"e":[{"f":true},2],"g":false,"h":{"i":[null]}}"#)
    }

    @Test("strings: quotes, backslashes and control characters escaped; other text copied as UTF-8")
    func escaping() {
        #expect(JSONString.quoted("a\"b\\c\u{01}\t\r\né€😀") == #""a\"b\\c\u0001\t\r\né€😀""#)
        #expect(JSONString.quoted("") == #""""#)
        #expect(JSONString.quoted("a\u{7F}b") == "\"a\u{7F}b\"")
        var log: [UInt8] = []
        JSONString.append("a\u{7F}b", to: &log, escapingDelete: true)
        #expect(String(decoding: log, as: UTF8.self) == #""a\u007fb""#)
    }
}
