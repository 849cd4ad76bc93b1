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

    @Test("a character to escape is found at every position of a long string, next to non-ASCII text too")
    func escapingAtEveryPosition() {
        // The byte-by-byte rule the escaper must agree with.
        func reference(_ text: String, escapingDelete: Bool) -> String {
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case _ where scalar.value < 0x20 || (escapingDelete && scalar.value == 0x7F):
                    out += "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
        let specials: [Character] = ["\"", "\\", "\u{00}", "\u{01}", "\n", "\u{1F}", "\u{7F}", " ", "~", "é", "😀"]
        for length in [1, 7, 8, 9, 15, 16, 17, 31] {
            for position in 0..<length {
                for special in specials {
                    var characters = Array(repeating: Character("a"), count: length)
                    characters[position] = special
                    let text = String(characters)
                    for escapingDelete in [false, true] {
                        var out: [UInt8] = []
                        JSONString.append(text, to: &out, escapingDelete: escapingDelete)
                        #expect(String(decoding: out, as: UTF8.self) == reference(text, escapingDelete: escapingDelete),
                                "\(length) \(position) \(special.unicodeScalars.first!.value) \(escapingDelete)")
                    }
                }
            }
        }
        let mixed = String(repeating: "é\"😀\\x\u{7F}\u{1}yz", count: 5)
        #expect(JSONString.quoted(mixed) == reference(mixed, escapingDelete: false))
        #expect(JSONString.quoted(mixed, escapingDelete: true) == reference(mixed, escapingDelete: true))
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
