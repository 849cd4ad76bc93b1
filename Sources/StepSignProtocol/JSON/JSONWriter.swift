/// The one JSON writer: compact (no whitespace), members in the order written, strings
/// escaped by ``JSONString``.
///
/// It streams into any ``JSONOutput``: the signature claims, headers and reply lines into a
/// `[UInt8]`. Keys are literals that need no escaping.
public struct JSONWriter<Output: JSONOutput> {
    /// What has been written.
    public var output: Output
    @usableFromInline var needsComma = false

    /// A writer that appends to `output`.
    @inlinable
    public init(into output: Output) {
        self.output = output
    }

    @inlinable
    public mutating func beginObject() {
        separate()
        output.appendByte(UInt8(ascii: "{"))
        needsComma = false
    }

    @inlinable
    public mutating func endObject() {
        output.appendByte(UInt8(ascii: "}"))
        needsComma = true
    }

    @inlinable
    public mutating func beginArray() {
        separate()
        output.appendByte(UInt8(ascii: "["))
        needsComma = false
    }

    @inlinable
    public mutating func endArray() {
        output.appendByte(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes `"key":` before a nested object or array.
    @inlinable
    public mutating func key(_ key: StaticString) {
        writeKey(key)
        needsComma = false
    }

    @inlinable
    public mutating func member(_ key: StaticString, _ value: String) {
        writeKey(key)
        JSONString.append(value, to: &output)
        needsComma = true
    }

    @inlinable
    public mutating func member(_ key: StaticString, _ value: some BinaryInteger) {
        writeKey(key)
        if let small = Int64(exactly: value) {
            output.appendDecimal(small)
        } else {
            output.appendRaw(String(value))
        }
        needsComma = true
    }

    @inlinable
    public mutating func member(_ key: StaticString, _ value: Bool) {
        writeKey(key)
        output.appendLiteral(value ? "true" : "false")
        needsComma = true
    }

    @inlinable
    public mutating func member(_ key: StaticString, _ value: JSONValue) {
        writeKey(key)
        needsComma = false
        self.value(value)
    }

    /// Writes `value` (an array element, or the whole document).
    public mutating func value(_ value: JSONValue) {
        switch value {
        case let .array(elements):
            beginArray()
            for element in elements {
                self.value(element)
            }
            endArray()
            return
        case let .object(members):
            beginObject()
            for (name, member) in members {
                separate()
                JSONString.append(name, to: &output)
                output.appendByte(UInt8(ascii: ":"))
                needsComma = false
                self.value(member)
            }
            endObject()
            return
        default:
            separate()
        }
        switch value {
        case .null: output.appendLiteral("null")
        case let .bool(flag): output.appendLiteral(flag ? "true" : "false")
        case let .int(number): output.appendDecimal(number)
        case let .double(number):
            if number.rounded() == number, abs(number) < 9.0e15 {
                output.appendDecimal(Int64(number))
            } else {
                output.appendRaw(String(number))
            }
        case let .string(text): JSONString.append(text, to: &output)
        case .array, .object: break // written above
        }
        needsComma = true
    }

    @inlinable
    mutating func separate() {
        if needsComma { output.appendByte(UInt8(ascii: ",")) }
    }

    @inlinable
    mutating func writeKey(_ key: StaticString) {
        separate()
        output.appendByte(UInt8(ascii: "\""))
        output.appendLiteral(key)
        output.appendByte(UInt8(ascii: "\""))
        output.appendByte(UInt8(ascii: ":"))
    }
}

extension JSONWriter where Output == [UInt8] {
    /// A writer into a new array with room for `capacity` bytes.
    @inlinable
    public init(capacity: Int) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(capacity)
        self.init(into: bytes)
    }

    /// The bytes written.
    @inlinable
    public var bytes: [UInt8] { output }
}

extension JSONValue {
    /// The compact JSON of this value.
    public var jsonBytes: [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.value(self)
        return writer.bytes
    }

    /// The compact JSON of this value, as a string.
    public var jsonText: String {
        String(decoding: jsonBytes, as: UTF8.self)
    }
}
