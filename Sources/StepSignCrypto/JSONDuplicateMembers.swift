/// Finds duplicate member names in a JSON text, the check a strict JOSE reader makes
/// (RFC 7515 §5.2 and RFC 7519 §4: a JWS header or claims set with a duplicate member must
/// be rejected, or refused as a whole).
///
/// Foundation's `JSONDecoder` keeps one of two equal members and says nothing, and other
/// libraries keep the other one (PyJWT keeps the last), so a JWS whose claims hold `"sub"`
/// twice means one thing to stepsign and another to a third party. Names are compared after
/// unescaping (`"p\u0061yload"` is `"payload"`). The scan is linear in the text and does
/// not build the values; it does not replace a parser, it runs before one.
public enum JSONDuplicateMembers {
    /// Why a text failed the check.
    public enum Finding: Error, Sendable, Equatable, CustomStringConvertible {
        /// An object has the member `name` more than once.
        case duplicate(String)
        /// The text is not JSON the scanner can read (or nests deeper than 64 levels).
        case malformed

        public var description: String {
            switch self {
            case .duplicate(let name): "duplicate member \"\(name)\""
            case .malformed: "not well-formed JSON"
            }
        }
    }

    /// Throws when any object in `json`, at any depth, names a member twice.
    public static func check(_ json: [UInt8]) throws(Finding) {
        var scanner = Scanner(bytes: json)
        scanner.skipWhitespace()
        try scanner.value(depth: 0)
        scanner.skipWhitespace()
        guard scanner.index == json.count else { throw .malformed }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func value(depth: Int) throws(Finding) {
            guard depth < 64, let byte = current else { throw .malformed }
            switch byte {
            case UInt8(ascii: "{"): try object(depth: depth + 1)
            case UInt8(ascii: "["): try array(depth: depth + 1)
            case UInt8(ascii: "\""): _ = try string()
            default:
                // Numbers, true, false, null: skip to the next structural character; the
                // parser that runs after this check validates them.
                let start = index
                while let next = current, !Self.isStructural(next) { index += 1 }
                guard index > start else { throw .malformed }
            }
        }

        static func isStructural(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]")
                || byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
        }

        mutating func object(depth: Int) throws(Finding) {
            index += 1
            var names = Set<[UInt8]>()
            skipWhitespace()
            if current == UInt8(ascii: "}") { index += 1; return }
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: "\"") else { throw .malformed }
                let name = try string()
                guard names.insert(name).inserted else { throw .duplicate(String(decoding: name, as: UTF8.self)) }
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { throw .malformed }
                index += 1
                skipWhitespace()
                try value(depth: depth)
                skipWhitespace()
                guard let separator = current else { throw .malformed }
                index += 1
                if separator == UInt8(ascii: "}") { return }
                guard separator == UInt8(ascii: ",") else { throw .malformed }
            }
        }

        mutating func array(depth: Int) throws(Finding) {
            index += 1
            skipWhitespace()
            if current == UInt8(ascii: "]") { index += 1; return }
            while true {
                skipWhitespace()
                try value(depth: depth)
                skipWhitespace()
                guard let separator = current else { throw .malformed }
                index += 1
                if separator == UInt8(ascii: "]") { return }
                guard separator == UInt8(ascii: ",") else { throw .malformed }
            }
        }

        /// The string at `index` (which is a quote), unescaped to UTF-8.
        mutating func string() throws(Finding) -> [UInt8] {
            index += 1
            var out: [UInt8] = []
            while let byte = current {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return out
                case UInt8(ascii: "\\"):
                    guard let escaped = current else { throw .malformed }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escaped)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800..<0xDC00).contains(scalar) {
                            guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u")
                            else { throw .malformed }
                            index += 2
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw .malformed }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00..<0xE000).contains(scalar) {
                            throw .malformed
                        }
                        guard let unicode = Unicode.Scalar(scalar) else { throw .malformed }
                        out.append(contentsOf: Array(String(Character(unicode)).utf8))
                    default:
                        throw .malformed
                    }
                default:
                    guard byte >= 0x20 else { throw .malformed }
                    out.append(byte)
                }
            }
            throw .malformed
        }

        mutating func hex4() throws(Finding) -> UInt32 {
            guard index + 4 <= bytes.count else { throw .malformed }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                index += 1
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw .malformed
                }
                value = value << 4 | digit
            }
            return value
        }
    }
}
