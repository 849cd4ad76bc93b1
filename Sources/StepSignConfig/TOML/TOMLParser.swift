/// The recursive-descent parser behind `TOMLDocument.parse(_:)`.
///
/// Works on Unicode scalars and tracks the line and column of everything it reads.
struct TOMLParser {
    let scalars: [Unicode.Scalar]
    var index = 0
    var line = 1
    var lineStart = 0

    init(_ text: String) {
        var scalars = Array(text.unicodeScalars)
        if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
        self.scalars = scalars
    }

    // MARK: - Document

    mutating func parseDocument() throws(TOMLError) -> TOMLTable {
        let root = TOMLTableNode(origin: .header, line: 1)
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

    /// `[a.b]`: finds or creates the table and makes it the current one. A table may be opened
    /// by a header once; a parent made by an earlier header (`a` by `[a.b]`) may still get its own.
    private mutating func parseHeader(root: TOMLTableNode) throws(TOMLError) -> (TOMLTableNode, [String]) {
        let at = (line: line, column: column)
        advance()  // "["
        if peek() == "[" {
            advance()
            return try parseArrayOfTablesHeader(root: root, at: at)
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
            let name = dotted(path[...i])
            node = try Self.table(part, of: node, named: name, making: isLast ? .header : .implicit, at: at) {
                existing throws(TOMLError) in
                guard isLast else { return }
                guard existing.origin == .implicit else {
                    throw TOMLError(.duplicate, line: at.line, column: at.column,
                                    message: "table [\(name)] is already defined on line \(existing.line)")
                }
                existing.origin = .header
                existing.line = at.line
            }
        }
        return (node, path)
    }

    /// `[[name]]`: a new table appended to the array of tables `name` of the root table (the
    /// config's `[[witness]]`, `[[approval]]`). Only top-level names: a dotted one, or a table
    /// inside such an array, is refused as unsupported.
    private mutating func parseArrayOfTablesHeader(root: TOMLTableNode, at: (line: Int, column: Int)) throws(TOMLError)
        -> (TOMLTableNode, [String]) {
        skipSpaces()
        let path = try parseKey()
        skipSpaces()
        guard peek() == "]" else {
            throw error("expected \"]]\" to close the array-of-tables header, found \(describeNext())")
        }
        advance()
        guard peek() == "]" else {
            throw error("expected \"]]\" to close the array-of-tables header, found \(describeNext())")
        }
        advance()
        guard path.count == 1 else {
            throw TOMLError(.unsupported, line: at.line, column: at.column,
                            message: "arrays of tables are supported at the top level only ([[name]]), not [[\(dotted(path[...]))]]")
        }
        let name = path[0]
        switch root.slot(name) {
        case .value(let v)?:
            throw TOMLError(.duplicate, line: at.line, column: at.column,
                            message: "\(name) is already defined as a value on line \(v.line)")
        case .table(let t)?:
            throw TOMLError(.duplicate, line: at.line, column: at.column,
                            message: "\(name) is already defined as a table on line \(t.line)")
        case .tables?, nil:
            let table = TOMLTableNode(origin: .header, line: at.line)
            root.appendTable(table, to: name)
            return (table, path)
        }
    }

    /// `key = value`, where the key may be dotted: `a.b = 1` makes or extends the table `a`,
    /// which must not have a header of its own.
    private mutating func parseKeyValue(into table: TOMLTableNode, tablePath: [String]) throws(TOMLError) {
        let at = (line: line, column: column)
        let path = try parseKey()
        skipSpaces()
        guard peek() == "=" else {
            throw error("expected \"=\" after the key \(dotted(path)), found \(describeNext())")
        }
        advance()
        skipSpaces()
        let value = try parseValue(keyLine: at.line)

        var node = table
        for (i, part) in path.dropLast().enumerated() {
            let name = dotted(tablePath + path[...i])
            node = try Self.table(part, of: node, named: name, making: .dotted, at: at) { existing throws(TOMLError) in
                guard existing.origin == .dotted else {
                    throw TOMLError(.duplicate, line: at.line, column: at.column,
                                    message: "table [\(name)] is already defined on line \(existing.line); "
                                        + "it cannot be extended with dotted keys")
                }
            }
        }
        let last = path[path.count - 1]
        let name = dotted(tablePath + path)
        switch node.slot(last) {
        case .value(let v)?:
            throw TOMLError(.duplicate, line: at.line, column: at.column,
                            message: "duplicate key \(name): already defined on line \(v.line)")
        case .table(let t)?:
            throw TOMLError(.duplicate, line: at.line, column: at.column,
                            message: "duplicate key \(name): already defined as a table on line \(t.line)")
        case .tables(let tables)?:
            throw TOMLError(.duplicate, line: at.line, column: at.column,
                            message: "duplicate key \(name): already defined as an array of tables on line \(tables.first?.line ?? 0)")
        case nil:
            node.add(last, .value(value))
        }
    }

    /// The table `part` of `node` on the way of a header or a dotted key: made with `origin`
    /// when missing; a value there is a duplicate; a table there already is passed to
    /// `existing`, which may refuse it.
    private static func table(
        _ part: String, of node: TOMLTableNode, named name: String, making origin: TOMLTableNode.Origin,
        at position: (line: Int, column: Int), existing: (TOMLTableNode) throws(TOMLError) -> Void
    ) throws(TOMLError) -> TOMLTableNode {
        switch node.slot(part) {
        case .value(let v)?:
            throw TOMLError(.duplicate, line: position.line, column: position.column,
                            message: "\(name) is already defined as a value on line \(v.line)")
        case .table(let t)?:
            try existing(t)
            return t
        case .tables(let tables)?:
            throw TOMLError(.unsupported, line: position.line, column: position.column,
                            message: "\(name) is an array of tables (line \(tables.first?.line ?? 0)); tables or dotted keys inside one are not supported")
        case nil:
            let t = TOMLTableNode(origin: origin, line: position.line)
            node.add(part, .table(t))
            return t
        }
    }

    // MARK: - Keys

    /// A key, possibly dotted: `a`, `"a b"`, `'a'`, `a.b.c`.
    mutating func parseKey() throws(TOMLError) -> [String] {
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

    mutating func parseSimpleKey() throws(TOMLError) -> String {
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

    static func isBareKeyScalar(_ c: Unicode.Scalar) -> Bool {
        switch c {
        case "A"..."Z", "a"..."z", "0"..."9", "_", "-": true
        default: false
        }
    }
}
