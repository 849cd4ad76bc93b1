/// A TOML table: its keys in the order they were written, each with its value and line.
public struct TOMLTable: Sendable, Equatable {
    /// One key of a table and its value.
    public struct Entry: Sendable, Equatable {
        /// The key, unquoted (one part; dotted keys become nested tables).
        public var key: String
        /// The value, which remembers its line.
        public var value: TOMLValue

        public init(key: String, value: TOMLValue) {
            self.key = key
            self.value = value
        }
    }

    /// The entries in the order they were first written.
    public private(set) var entries: [Entry]
    /// The line that created the table (its header, or the first dotted key through it);
    /// 1 for the root table.
    public var line: Int

    public init(entries: [Entry] = [], line: Int) {
        self.entries = entries
        self.line = line
    }

    /// The keys in the order they were written.
    public var keys: [String] { entries.map(\.key) }

    /// The value for `key`, if present.
    public subscript(key: String) -> TOMLValue? {
        entries.first(where: { $0.key == key })?.value
    }

    /// Removes the value at the dotted `path` (a part `name[N]` goes into the Nth table of
    /// `[[name]]`, which itself stays); returns whether there was one. `stepsignd --check`
    /// reads on past a refused key with its default in its place.
    mutating func removeValue(at path: ArraySlice<Substring>) -> Bool {
        guard let part = path.first else { return false }
        var name = part
        var index: Int?
        if let open = part.firstIndex(of: "["), part.hasSuffix("]") {
            name = part[..<open]
            index = Int(part[part.index(after: open)..<part.index(before: part.endIndex)])
        }
        guard let position = entries.firstIndex(where: { $0.key == name }) else { return false }
        if path.count == 1, index == nil {
            entries.remove(at: position)
            return true
        }
        var value = entries[position].value
        var removed = false
        if let index {
            guard path.count > 1, case var .array(elements) = value.kind, elements.indices.contains(index - 1),
                  case var .table(table) = elements[index - 1].kind else { return false }
            removed = table.removeValue(at: path.dropFirst())
            elements[index - 1].kind = .table(table)
            value.kind = .array(elements)
        } else {
            guard case var .table(table) = value.kind else { return false }
            removed = table.removeValue(at: path.dropFirst())
            value.kind = .table(table)
        }
        entries[position].value = value
        return removed
    }

    /// Appends an entry; the parser has already ruled out duplicates.
    mutating func append(_ entry: Entry) {
        entries.append(entry)
    }
}
