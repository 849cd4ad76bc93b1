/// A strict JSON parser for request lines (RFC 8259).
///
/// Stricter than Foundation's on purpose: invalid UTF-8, lone surrogates, duplicate object
/// members and nesting deeper than `maxDepth` are errors, so that a request means one thing.
public struct JSONParser {
    /// Why a text is not accepted.
    public struct Error: Swift.Error, Equatable, CustomStringConvertible {
        /// Byte offset of the problem.
        public var offset: Int
        public var reason: String
        /// The name an object holds twice, when that is the problem: a strict JOSE reader must
        /// refuse such a header or claims set (RFC 7515 §5.2, RFC 7519 §4), because other
        /// readers keep one or the other member.
        public var duplicateMember: String?
        public var description: String { "invalid JSON at byte \(offset): \(reason)" }

        public init(offset: Int, reason: String, duplicateMember: String? = nil) {
            self.offset = offset
            self.reason = reason
            self.duplicateMember = duplicateMember
        }
    }

    /// The deepest nesting of arrays and objects accepted.
    public static let maxDepth = 32

    /// Up to this many members an object's names are checked for duplicates by comparing
    /// with each earlier name (no hashing, no allocation: requests have a handful); past it,
    /// with a set of the names, so the check stays linear however many members a line holds.
    static let duplicateScanLimit = 8

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Parses exactly one JSON value, surrounded by optional whitespace.
    public static func parse(_ input: some Collection<UInt8>) throws(JSONParser.Error) -> JSONValue {
        // Parse in place when the bytes are contiguous (a NIO ByteBuffer's view is), else copy.
        let parsed = input.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParser.Error) in try parse(buffer) }
        } ?? Array(input).withUnsafeBufferPointer { buffer in
            Result { () throws(JSONParser.Error) in try parse(buffer) }
        }
        return try parsed.get()
    }

    private static func parse(_ buffer: UnsafeBufferPointer<UInt8>) throws(JSONParser.Error) -> JSONValue {
        var parser = JSONParser(bytes: buffer)
        parser.skipWhitespace()
        let value = try parser.parseValue()
        parser.skipWhitespace()
        guard parser.index == buffer.count else { throw parser.fail("unexpected data after the value") }
        return value
    }

    private func fail(_ reason: String) -> Error {
        Error(offset: index, reason: reason)
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
            index += 1
        }
    }

    private mutating func expect(_ literal: StaticString, value: JSONValue) throws(Error) -> JSONValue {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw fail("unexpected end of input") }
        for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] {
            throw fail("unexpected character")
        }
        index += count
        return value
    }

    private mutating func parseValue() throws(Error) -> JSONValue {
        guard let byte = current else { throw fail("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try expect("true", value: .bool(true))
        case UInt8(ascii: "f"): return try expect("false", value: .bool(false))
        case UInt8(ascii: "n"): return try expect("null", value: .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character")
        }
    }

    private mutating func enterContainer() throws(Error) {
        depth += 1
        guard depth <= Self.maxDepth else { throw fail("nested deeper than \(Self.maxDepth)") }
        index += 1
    }

    private mutating func parseObject() throws(Error) -> JSONValue {
        try enterContainer()
        defer { depth -= 1 }
        var members: [(String, JSONValue)] = []
        // The names so far, filled only once the object passes `duplicateScanLimit` members.
        var names = Set<String>()
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let keyOffset = index
            let key = try parseString()
            let duplicate: Bool
            if members.count < Self.duplicateScanLimit {
                duplicate = members.contains(where: { $0.0 == key })
            } else {
                if names.isEmpty { names = Set(members.lazy.map(\.0)) }
                duplicate = !names.insert(key).inserted
            }
            if duplicate {
                throw Error(offset: keyOffset, reason: "duplicate member \"\(key)\"", duplicateMember: key)
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            members.append((key, try parseValue()))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            default: throw fail("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray() throws(Error) -> JSONValue {
        try enterContainer()
        defer { depth -= 1 }
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default: throw fail("expected ',' or ']'")
            }
        }
    }

    private mutating func parseNumber() throws(Error) -> JSONValue {
        let start = index
        var integral = true
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, isDigit(first) else { throw fail("expected a digit") }
        if first == UInt8(ascii: "0") {
            index += 1
        } else {
            while let byte = current, isDigit(byte) { index += 1 }
        }
        if current == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard let byte = current, isDigit(byte) else { throw fail("expected a digit after '.'") }
            while let byte = current, isDigit(byte) { index += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            integral = false
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let byte = current, isDigit(byte) else { throw fail("expected a digit in the exponent") }
            while let byte = current, isDigit(byte) { index += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if integral, let value = Int64(text) { return .int(value) }
        guard let value = Double(text), value.isFinite else {
            throw Error(offset: start, reason: "number out of range")
        }
        return .double(value)
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private mutating func parseString() throws(Error) -> String {
        index += 1  // opening quote
        // Fast path, most strings: ASCII without escapes or controls is valid UTF-8 as it
        // stands, so it becomes a String in one piece, without the generic validation below.
        var end = index
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") {
                let string = String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<end]), as: UTF8.self)
                index = end + 1
                return string
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { break }
            end += 1
        }
        var out = Array(bytes[index..<end])
        index = end
        while true {
            guard let byte = current else { throw fail("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = String(validating: out, as: UTF8.self) else {
                    throw fail("string is not valid UTF-8")
                }
                return string
            case UInt8(ascii: "\\"):
                index += 1
                try parseEscape(into: &out)
            case 0..<0x20:
                throw fail("control character in string")
            default:
                out.append(byte)
                index += 1
            }
        }
    }

    private mutating func parseEscape(into out: inout [UInt8]) throws(Error) {
        guard let byte = current else { throw fail("unterminated escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): out.append(0x22)
        case UInt8(ascii: "\\"): out.append(0x5C)
        case UInt8(ascii: "/"): out.append(0x2F)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4()
            if (0xD800...0xDBFF).contains(scalar) {
                guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u")
                else { throw fail("lone surrogate") }
                index += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw fail("lone surrogate") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw fail("lone surrogate")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid escape") }
            out.append(contentsOf: Array(String(Character(unicode)).utf8))
        default:
            throw fail("invalid escape")
        }
    }

    private mutating func parseHex4() throws(Error) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("unterminated escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail("invalid \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}
