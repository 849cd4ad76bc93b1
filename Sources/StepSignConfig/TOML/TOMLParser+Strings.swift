// Basic and literal strings, with their escapes.
extension TOMLParser {
    // MARK: - Strings

    /// `"…"` on one line, with escapes.
    mutating func parseBasicString() throws(TOMLError) -> String {
        try parseOneLineString(closedBy: "\"", escapes: true)
    }

    /// `'…'` on one line, taken as it is.
    mutating func parseLiteralString() throws(TOMLError) -> String {
        try parseOneLineString(closedBy: "'", escapes: false)
    }

    /// A string from its opening `quote` to the closing one on the same line; control
    /// characters (but tab) refused, and `\` escapes read when `escapes`.
    private mutating func parseOneLineString(closedBy quote: Unicode.Scalar, escapes: Bool) throws(TOMLError) -> String {
        let startLine = line
        let startColumn = column
        advance()  // opening quote
        var out = String.UnicodeScalarView()
        while true {
            guard let c = peek(), c != "\n", c != "\r" else {
                throw TOMLError(
                    .syntax, line: startLine, column: startColumn,
                    message: "unterminated string: missing closing \(quote) on the line it starts")
            }
            advance()
            if c == quote { return String(out) }
            if escapes && c == "\\" {
                out.append(try parseEscape())
            } else {
                try checkNotControl(c)
                out.append(c)
            }
        }
    }

    mutating func parseEscape() throws(TOMLError) -> Unicode.Scalar {
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

    func checkNotControl(_ c: Unicode.Scalar) throws(TOMLError) {
        if (c.value < 0x20 && c != "\t") || c.value == 0x7F {
            throw TOMLError(
                .syntax, line: line, column: column - 1,
                message: "control character \(Self.printable(c)) is not allowed here")
        }
    }
}
