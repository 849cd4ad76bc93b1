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

    /// Appends an entry; the parser has already ruled out duplicates.
    mutating func append(_ entry: Entry) {
        entries.append(entry)
    }
}
