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

    @Test("integers are written as their decimal description, at the ends of their ranges too")
    func integers() {
        let values: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, 1_234_567_890, -987_654_321, .max, .min, .max - 1, .min + 1]
        for value in values {
            var writer = JSONWriter(capacity: 32)
            writer.beginObject()
            writer.member("n", value)
            writer.endObject()
            writer.value(.int(value))
            #expect(String(decoding: writer.bytes, as: UTF8.self) == "{\"n\":\(value)},\(value)")
        }
        var writer = JSONWriter(capacity: 64)
        writer.beginObject()
        writer.member("u", UInt64.max)
        writer.member("i", Int8.min)
        writer.member("d", JSONValue.double(-42))
        writer.member("f", JSONValue.double(0.5))
        writer.endObject()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"u":18446744073709551615,"i":-128,"d":-42,"f":0.5}"#)
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
