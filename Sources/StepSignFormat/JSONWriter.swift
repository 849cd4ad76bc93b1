/// A minimal JSON writer for the hot path: appends members in the order given, with
/// RFC 8259 string escaping (`"`, `\`, and control characters; everything else is written as
/// its UTF-8 bytes, which Swift strings guarantee to be valid).
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    private var needsComma = false

    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    mutating func member(_ key: StaticString, _ value: String) {
        writeKey(key)
        string(value)
    }

    mutating func member(_ key: StaticString, _ value: some BinaryInteger) {
        writeKey(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Writes `"key":` before a nested value (``beginObject()`` follows).
    mutating func key(_ key: StaticString) {
        writeKey(key)
        needsComma = false
    }

    /// Writes `"key":`; keys are literals that need no escaping.
    private mutating func writeKey(_ key: StaticString) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = true
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// Writes `value` as an escaped JSON string.
    mutating func string(_ value: String) {
        JSONString.append(value, to: &bytes)
    }
}
