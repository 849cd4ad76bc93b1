// Values: booleans, numbers, arrays (strings are in TOMLParser+Strings).
extension TOMLParser {
    // MARK: - Values

    mutating func parseValue(keyLine: Int) throws(TOMLError) -> TOMLValue {
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

    mutating func parseBoolean() throws(TOMLError) -> Bool {
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
    mutating func readToken() -> String {
        var token = String.UnicodeScalarView()
        while let c = peek(), Self.isBareKeyScalar(c) || c == "+" || c == "." || c == ":" {
            token.append(c)
            advance()
        }
        return String(token)
    }

    mutating func parseNumber() throws(TOMLError) -> TOMLValue.Kind {
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
    static func digits(_ s: Substring, radix: Int) -> String? {
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
    static func decimalFloat(_ s: Substring) -> String? {
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

    static func looksLikeDateOrTime(_ token: String) -> Bool {
        let c = Array(token)
        func isDigit(_ i: Int) -> Bool { i < c.count && c[i].isASCII && c[i].isNumber }
        let date = (0..<4).allSatisfy(isDigit) && c.count > 4 && c[4] == "-"
        let time = (0..<2).allSatisfy(isDigit) && c.count > 2 && c[2] == ":"
        return date || time
    }

    mutating func parseArray() throws(TOMLError) -> TOMLValue {
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
}
