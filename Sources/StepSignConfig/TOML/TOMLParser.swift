/// The recursive-descent parser behind `TOMLDocument.parse(_:)`.
///
/// Works on Unicode scalars and tracks the line and column of everything it reads.
struct TOMLParser {
    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var line = 1
    private var lineStart = 0

    init(_ text: String) {
        var scalars = Array(text.unicodeScalars)
        if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
        self.scalars = scalars
    }

    // MARK: - Document

    mutating func parseDocument() throws(TOMLError) -> TOMLTable {
        let root = TableNode(origin: .header, line: 1)
        var current = root
        var currentPath: [String] = []
        while true {
            skipSpaces()
            guard let c = peek() else { break }
            if c == "[" {
                (current, currentPath) = try parseHeader(root: root)
            } else if c != "#" && c != "\n" && c != "\r" {
                try parseKeyValue(into: current, tablePath: currentPath)
            }
            try expectEndOfLine()
        }
        return root.freeze()
    }

    /// `[a.b]`: finds or creates the table and makes it the current one.
    private mutating func parseHeader(root: TableNode) throws(TOMLError) -> (TableNode, [String]) {
        let headerLine = line
        let headerColumn = column
        advance()  // "["
        if peek() == "[" {
            throw TOMLError(
                .unsupported, line: headerLine, column: headerColumn,
                message: "arrays of tables ([[...]]) are not supported by stepsign's config reader")
        }
        skipSpaces()
        let path = try parseKey()
        skipSpaces()
        guard peek() == "]" else {
            throw error("expected \"]\" to close the table header, found \(describeNext())")
        }
        advance()

        var node = root
        for (i, part) in path.enumerated() {
            let isLast = i == path.count - 1
            let name = dotted(Array(path[...i]))
            switch node.slot(part) {
            case .value(let v)?:
                throw TOMLError(
                    .duplicate, line: headerLine, column: headerColumn,
                    message: "\(name) is already defined as a value on line \(v.line)")
            case .table(let t)?:
                if isLast {
                    guard t.origin == .implicit else {
                        throw TOMLError(
                            .duplicate, line: headerLine, column: headerColumn,
                            message: "table [\(name)] is already defined on line \(t.line)")
                    }
                    t.origin = .header
                    t.line = headerLine
                }
                node = t
            case nil:
                let t = TableNode(origin: isLast ? .header : .implicit, line: headerLine)
                node.add(part, .table(t))
                node = t
            }
        }
        return (node, path)
    }

    /// `key = value`, where the key may be dotted.
    private mutating func parseKeyValue(into table: TableNode, tablePath: [String]) throws(TOMLError) {
        let keyLine = line
        let keyColumn = column
        let path = try parseKey()
        skipSpaces()
        guard peek() == "=" else {
            throw error("expected \"=\" after the key \(dotted(path)), found \(describeNext())")
        }
        advance()
        skipSpaces()
        let value = try parseValue(keyLine: keyLine)

        var node = table
        for (i, part) in path.dropLast().enumerated() {
            let name = dotted(tablePath + path[...i])
            switch node.slot(part) {
            case .value(let v)?:
                throw TOMLError(
                    .duplicate, line: keyLine, column: keyColumn,
                    message: "\(name) is already defined as a value on line \(v.line)")
            case .table(let t)?:
                guard t.origin == .dotted else {
                    throw TOMLError(
                        .duplicate, line: keyLine, column: keyColumn,
                        message: "table [\(name)] is already defined on line \(t.line); "
                            + "it cannot be extended with dotted keys")
                }
                node = t
            case nil:
                let t = TableNode(origin: .dotted, line: keyLine)
                node.add(part, .table(t))
                node = t
            }
        }
        let last = path[path.count - 1]
        let name = dotted(tablePath + path)
        switch node.slot(last) {
        case .value(let v)?:
            throw TOMLError(
                .duplicate, line: keyLine, column: keyColumn,
                message: "duplicate key \(name): already defined on line \(v.line)")
        case .table(let t)?:
            throw TOMLError(
                .duplicate, line: keyLine, column: keyColumn,
                message: "duplicate key \(name): already defined as a table on line \(t.line)")
        case nil:
            node.add(last, .value(value))
        }
    }

    // MARK: - Keys

    /// A key, possibly dotted: `a`, `"a b"`, `'a'`, `a.b.c`.
    private mutating func parseKey() throws(TOMLError) -> [String] {
        var parts = [try parseSimpleKey()]
        while true {
            let save = (index, line, lineStart)
            skipSpaces()
            guard peek() == "." else {
                (index, line, lineStart) = save
                return parts
            }
            advance()
            skipSpaces()
            parts.append(try parseSimpleKey())
        }
    }

    private mutating func parseSimpleKey() throws(TOMLError) -> String {
        switch peek() {
        case "\""?:
            return try parseBasicString()
        case "'"?:
            return try parseLiteralString()
        case let c? where Self.isBareKeyScalar(c):
            var key = String.UnicodeScalarView()
            while let c = peek(), Self.isBareKeyScalar(c) {
                key.append(c)
                advance()
            }
            return String(key)
        default:
            throw error("expected a key, found \(describeNext())")
        }
    }

    private static func isBareKeyScalar(_ c: Unicode.Scalar) -> Bool {
        switch c {
        case "A"..."Z", "a"..."z", "0"..."9", "_", "-": true
        default: false
        }
    }

    // MARK: - Values

    private mutating func parseValue(keyLine: Int) throws(TOMLError) -> TOMLValue {
        let valueLine = line
        guard let c = peek(), c != "\n", c != "\r", c != "#" else {
            throw error("expected a value, found \(describeNext())")
        }
        switch c {
        case "\"":
            if peek(1) == "\"" && peek(2) == "\"" {
                throw TOMLError(
                    .unsupported, line: line, column: column,
                    message: "multi-line strings (\"\"\"...\"\"\") are not supported by stepsign's config reader")
            }
            return TOMLValue(.string(try parseBasicString()), line: valueLine)
        case "'":
            if peek(1) == "'" && peek(2) == "'" {
                throw TOMLError(
                    .unsupported, line: line, column: column,
                    message: "multi-line strings ('''...''') are not supported by stepsign's config reader")
            }
            return TOMLValue(.string(try parseLiteralString()), line: valueLine)
        case "[":
            return try parseArray()
        case "{":
            throw TOMLError(
                .unsupported, line: line, column: column,
                message: "inline tables ({...}) are not supported by stepsign's config reader; use a [table] header")
        case "t", "f":
            return TOMLValue(.boolean(try parseBoolean()), line: valueLine)
        case "0"..."9", "+", "-", "i", "n":
            return TOMLValue(try parseNumber(), line: valueLine)
        default:
            throw error("expected a value, found \(describeNext())")
        }
    }

    private mutating func parseBoolean() throws(TOMLError) -> Bool {
        let startColumn = column
        let word = readToken()
        switch word {
        case "true": return true
        case "false": return false
        default:
            throw TOMLError(
                .syntax, line: line, column: startColumn,
                message: "expected a value, found \(word) (strings must be quoted)")
        }
    }

    /// Reads the scalars that may make up a bare word or number.
    private mutating func readToken() -> String {
        var token = String.UnicodeScalarView()
        while let c = peek(), Self.isBareKeyScalar(c) || c == "+" || c == "." || c == ":" {
            token.append(c)
            advance()
        }
        return String(token)
    }

    private mutating func parseNumber() throws(TOMLError) -> TOMLValue.Kind {
        let startColumn = column
        let token = readToken()
        func fail(_ message: String, _ reason: TOMLError.Reason = .syntax) -> TOMLError {
            TOMLError(reason, line: line, column: startColumn, message: message)
        }
        if Self.looksLikeDateOrTime(token) {
            throw fail("dates and times (\(token)) are not supported by stepsign's config reader", .unsupported)
        }
        var body = Substring(token)
        var sign = ""
        if let first = body.first, first == "+" || first == "-" {
            sign = first == "-" ? "-" : ""
            body = body.dropFirst()
        }
        if body == "inf" || body == "nan" {
            throw fail("\(token) is not supported by stepsign's config reader", .unsupported)
        }
        let radix: Int? = switch body.prefix(2) {
        case "0x": 16
        case "0o": 8
        case "0b": 2
        default: nil
        }
        if let radix {
            guard token.first != "+" && token.first != "-" else {
                throw fail("a sign is not allowed on a hex, octal or binary integer: \(token)")
            }
            guard let digits = Self.digits(body.dropFirst(2), radix: radix),
                  let value = Int64(digits, radix: radix)
            else {
                throw fail("invalid or out-of-range integer \(token)")
            }
            return .integer(value)
        }
        if body.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
            guard let cleaned = Self.decimalFloat(body), let value = Double(sign + cleaned), value.isFinite else {
                throw fail("invalid number \(token)")
            }
            return .float(value)
        }
        guard let digits = Self.digits(body, radix: 10) else {
            throw fail("invalid value \(token) (strings must be quoted)")
        }
        if digits.count > 1 && digits.first == "0" {
            throw fail("leading zeros are not allowed in integers: \(token) (write octal as 0o... or as a string)")
        }
        guard let value = Int64(sign + digits) else {
            throw fail("integer \(token) is out of range")
        }
        return .integer(value)
    }

    /// The digits of `s` in `radix` without the `_` separators, or nil if `s` is empty,
    /// holds another character, or has a `_` that is not between two digits.
    private static func digits(_ s: Substring, radix: Int) -> String? {
        var out = ""
        var previousWasDigit = false
        for c in s {
            if c == "_" {
                guard previousWasDigit else { return nil }
                previousWasDigit = false
            } else {
                guard let v = c.hexDigitValue, v < radix, c.isASCII else { return nil }
                out.append(c)
                previousWasDigit = true
            }
        }
        return previousWasDigit ? out : nil
    }

    /// A TOML decimal float without `_`, or nil if it is not one.
    private static func decimalFloat(_ s: Substring) -> String? {
        var rest = s
        var exponent: Substring?
        if let e = rest.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            exponent = rest[rest.index(after: e)...]
            rest = rest[..<e]
        }
        var fraction: Substring?
        if let dot = rest.firstIndex(of: ".") {
            fraction = rest[rest.index(after: dot)...]
            rest = rest[..<dot]
        }
        guard let intPart = digits(rest, radix: 10), intPart.count == 1 || intPart.first != "0" else { return nil }
        var out = intPart
        if let fraction {
            guard let f = digits(fraction, radix: 10) else { return nil }
            out += "." + f
        }
        if var exponent {
            var expSign = ""
            if let first = exponent.first, first == "+" || first == "-" {
                expSign = String(first)
                exponent = exponent.dropFirst()
            }
            guard let e = digits(exponent, radix: 10) else { return nil }
            out += "e" + expSign + e
        }
        return out
    }

    private static func looksLikeDateOrTime(_ token: String) -> Bool {
        let c = Array(token)
        func isDigit(_ i: Int) -> Bool { i < c.count && c[i].isASCII && c[i].isNumber }
        let date = (0..<4).allSatisfy(isDigit) && c.count > 4 && c[4] == "-"
        let time = (0..<2).allSatisfy(isDigit) && c.count > 2 && c[2] == ":"
        return date || time
    }

    private mutating func parseArray() throws(TOMLError) -> TOMLValue {
        let startLine = line
        let startColumn = column
        advance()  // "["
        var elements: [TOMLValue] = []
        while true {
            try skipSpacesNewlinesAndComments()
            guard let c = peek() else {
                throw TOMLError(
                    .syntax, line: startLine, column: startColumn,
                    message: "unterminated array: missing \"]\" for the array that starts here")
            }
            if c == "]" {
                advance()
                break
            }
            elements.append(try parseValue(keyLine: line))
            try skipSpacesNewlinesAndComments()
            switch peek() {
            case ","?:
                advance()
            case "]"?:
                advance()
                return TOMLValue(.array(elements), line: startLine)
            case nil:
                throw TOMLError(
                    .syntax, line: startLine, column: startColumn,
                    message: "unterminated array: missing \"]\" for the array that starts here")
            default:
                throw error("expected \",\" or \"]\" in the array that starts on line \(startLine), found \(describeNext())")
            }
        }
        return TOMLValue(.array(elements), line: startLine)
    }

    // MARK: - Strings

    private mutating func parseBasicString() throws(TOMLError) -> String {
        let startLine = line
        let startColumn = column
        advance()  // opening quote
        var out = String.UnicodeScalarView()
        while true {
            guard let c = peek(), c != "\n", c != "\r" else {
                throw TOMLError(
                    .syntax, line: startLine, column: startColumn,
                    message: "unterminated string: missing closing \" on the line it starts")
            }
            advance()
            switch c {
            case "\"":
                return String(out)
            case "\\":
                out.append(try parseEscape())
            default:
                try checkNotControl(c)
                out.append(c)
            }
        }
    }

    private mutating func parseEscape() throws(TOMLError) -> Unicode.Scalar {
        let escapeColumn = column - 1
        guard let c = peek(), c != "\n", c != "\r" else {
            throw error("unterminated string: a backslash ends the line (multi-line strings are not supported)")
        }
        advance()
        switch c {
        case "b": return "\u{08}"
        case "t": return "\t"
        case "n": return "\n"
        case "f": return "\u{0C}"
        case "r": return "\r"
        case "\"": return "\""
        case "\\": return "\\"
        case "u", "U":
            let count = c == "u" ? 4 : 8
            var hex = ""
            for _ in 0..<count {
                guard let h = peek(), h.properties.isASCIIHexDigit else {
                    throw TOMLError(
                        .syntax, line: line, column: escapeColumn,
                        message: "\\\(c) must be followed by \(count) hex digits")
                }
                hex.unicodeScalars.append(h)
                advance()
            }
            guard let v = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(v) else {
                throw TOMLError(
                    .syntax, line: line, column: escapeColumn,
                    message: "\\\(c)\(hex) is not a Unicode scalar value")
            }
            return scalar
        default:
            throw TOMLError(
                .syntax, line: line, column: escapeColumn,
                message: "invalid escape \\\(Self.printable(c)) in a string")
        }
    }

    private mutating func parseLiteralString() throws(TOMLError) -> String {
        let startLine = line
        let startColumn = column
        advance()  // opening quote
        var out = String.UnicodeScalarView()
        while true {
            guard let c = peek(), c != "\n", c != "\r" else {
                throw TOMLError(
                    .syntax, line: startLine, column: startColumn,
                    message: "unterminated string: missing closing ' on the line it starts")
            }
            advance()
            if c == "'" { return String(out) }
            try checkNotControl(c)
            out.append(c)
        }
    }

    private func checkNotControl(_ c: Unicode.Scalar) throws(TOMLError) {
        if (c.value < 0x20 && c != "\t") || c.value == 0x7F {
            throw TOMLError(
                .syntax, line: line, column: column - 1,
                message: "control character \(Self.printable(c)) is not allowed here")
        }
    }

    // MARK: - Whitespace, comments, line ends

    private mutating func skipSpaces() {
        while let c = peek(), c == " " || c == "\t" { advance() }
    }

    /// After a header or key/value: optional spaces and comment, then a newline or the end.
    private mutating func expectEndOfLine() throws(TOMLError) {
        skipSpaces()
        if peek() == "#" { try skipComment() }
        switch peek() {
        case nil:
            return
        case "\n"?:
            advance()
        case "\r"? where peek(1) == "\n":
            advance()
            advance()
        default:
            throw error("expected the end of the line, found \(describeNext())")
        }
    }

    private mutating func skipComment() throws(TOMLError) {
        while let c = peek(), c != "\n" {
            if c == "\r" && peek(1) == "\n" { return }
            advance()
            try checkNotControl(c)
        }
    }

    private mutating func skipSpacesNewlinesAndComments() throws(TOMLError) {
        while true {
            skipSpaces()
            switch peek() {
            case "#"?:
                try skipComment()
            case "\n"?:
                advance()
            case "\r"? where peek(1) == "\n":
                advance()
                advance()
            default:
                return
            }
        }
    }

    // MARK: - Cursor

    private var column: Int { index - lineStart + 1 }

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        let i = index + offset
        return i < scalars.count ? scalars[i] : nil
    }

    private mutating func advance() {
        guard index < scalars.count else { return }
        let c = scalars[index]
        index += 1
        if c == "\n" {
            line += 1
            lineStart = index
        }
    }

    private func error(_ message: String) -> TOMLError {
        TOMLError(.syntax, line: line, column: column, message: message)
    }

    private func describeNext() -> String {
        guard let c = peek() else { return "the end of the file" }
        switch c {
        case "\n", "\r": return "the end of the line"
        case "#": return "a comment"
        default: return "\"\(Self.printable(c))\""
        }
    }

    private static func printable(_ c: Unicode.Scalar) -> String {
        if c.value < 0x20 || c.value == 0x7F {
            let hex = String(c.value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: 4 - hex.count) + hex
        }
        return String(c)
    }

    private func dotted(_ path: [String]) -> String {
        path.map { Self.isBareKey($0) ? $0 : TOMLValue.quoted($0) }.joined(separator: ".")
    }

    private func dotted(_ path: some Sequence<String>) -> String {
        dotted(Array(path))
    }

    private static func isBareKey(_ key: String) -> Bool {
        !key.isEmpty && key.unicodeScalars.allSatisfy(isBareKeyScalar)
    }
}

/// A table while it is being built; frozen into a `TOMLTable` at the end.
private final class TableNode {
    enum Origin {
        /// Defined by its own `[header]`.
        case header
        /// Created as the parent of a header, e.g. `a` by `[a.b]`; may still get a header.
        case implicit
        /// Created by a dotted key, e.g. `a` by `a.b = 1`.
        case dotted
    }

    enum Slot {
        case value(TOMLValue)
        case table(TableNode)
    }

    var origin: Origin
    var line: Int
    private var order: [String] = []
    private var slots: [String: Slot] = [:]

    init(origin: Origin, line: Int) {
        self.origin = origin
        self.line = line
    }

    func slot(_ key: String) -> Slot? { slots[key] }

    func add(_ key: String, _ slot: Slot) {
        order.append(key)
        slots[key] = slot
    }

    func freeze() -> TOMLTable {
        var table = TOMLTable(line: line)
        for key in order {
            switch slots[key] {
            case .value(let v)?:
                table.append(.init(key: key, value: v))
            case .table(let t)?:
                table.append(.init(key: key, value: TOMLValue(.table(t.freeze()), line: t.line)))
            case nil:
                break
            }
        }
        return table
    }
}
