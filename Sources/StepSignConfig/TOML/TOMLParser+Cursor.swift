// The cursor over the text, whitespace and comments, and the parts of error messages.
extension TOMLParser {
    // MARK: - Whitespace, comments, line ends

    mutating func skipSpaces() {
        while let c = peek(), c == " " || c == "\t" { advance() }
    }

    /// After a header or key/value: optional spaces and comment, then a newline or the end.
    mutating func expectEndOfLine() throws(TOMLError) {
        skipSpaces()
        if peek() == "#" { try skipComment() }
        guard peek() == nil || skipLineEnd() else {
            throw error("expected the end of the line, found \(describeNext())")
        }
    }

    /// Consumes a line end (`\n` or `\r\n`) if one is next.
    mutating func skipLineEnd() -> Bool {
        switch peek() {
        case "\n"?:
            advance()
        case "\r"? where peek(1) == "\n":
            advance()
            advance()
        default:
            return false
        }
        return true
    }

    mutating func skipComment() throws(TOMLError) {
        while let c = peek(), c != "\n" {
            if c == "\r" && peek(1) == "\n" { return }
            advance()
            try checkNotControl(c)
        }
    }

    mutating func skipSpacesNewlinesAndComments() throws(TOMLError) {
        while true {
            skipSpaces()
            if peek() == "#" {
                try skipComment()
            } else if !skipLineEnd() {
                return
            }
        }
    }

    // MARK: - Cursor

    var column: Int { index - lineStart + 1 }

    func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        let i = index + offset
        return i < scalars.count ? scalars[i] : nil
    }

    mutating func advance() {
        guard index < scalars.count else { return }
        let c = scalars[index]
        index += 1
        if c == "\n" {
            line += 1
            lineStart = index
        }
    }

    func error(_ message: String) -> TOMLError {
        TOMLError(.syntax, line: line, column: column, message: message)
    }

    func describeNext() -> String {
        guard let c = peek() else { return "the end of the file" }
        switch c {
        case "\n", "\r": return "the end of the line"
        case "#": return "a comment"
        default: return "\"\(Self.printable(c))\""
        }
    }

    static func printable(_ c: Unicode.Scalar) -> String {
        if c.value < 0x20 || c.value == 0x7F {
            let hex = String(c.value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: 4 - hex.count) + hex
        }
        return String(c)
    }

    func dotted(_ path: [String]) -> String {
        path.map { Self.isBareKey($0) ? $0 : TOMLValue.quoted($0) }.joined(separator: ".")
    }

    func dotted(_ path: some Sequence<String>) -> String {
        dotted(Array(path))
    }

    static func isBareKey(_ key: String) -> Bool {
        !key.isEmpty && key.unicodeScalars.allSatisfy(isBareKeyScalar)
    }
}
