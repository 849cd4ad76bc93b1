import StepSignFormat

/// Serializes `JSONValue` as compact JSON (no whitespace, members in order, no trailing newline).
public enum JSONWriter {
    /// The UTF-8 bytes of `value`.
    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(2048) // a signing reply is about 1.3 KB; one allocation
        write(value, into: &out)
        return out
    }

    /// `value` as a string.
    public static func string(_ value: JSONValue) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    /// Appends `value` to `out`.
    public static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case let .bool(flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case let .int(number): out.append(contentsOf: String(number).utf8)
        case let .double(number):
            if number.rounded() == number, abs(number) < 9.0e15 {
                out.append(contentsOf: String(Int64(number)).utf8)
            } else {
                out.append(contentsOf: String(number).utf8)
            }
        case let .string(text): writeString(text, into: &out)
        case let .array(elements):
            out.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                write(element, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case let .object(members):
            out.append(UInt8(ascii: "{"))
            for (offset, member) in members.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                writeString(member.0, into: &out)
                out.append(UInt8(ascii: ":"))
                write(member.1, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Writes `text` as a JSON string, escaping quotes, backslashes and control characters.
    public static func writeString(_ text: String, into out: inout [UInt8]) {
        JSONString.append(text, to: &out)
    }
}
