/// Where each key of a configuration file was written: the line of a dotted key
/// (`storage.postgresql.password_file`, `witness[2].key`), for problems found after the file
/// parsed, such as a file a key names that cannot be read (`stepsignd --check`).
package struct ConfigKeyLines: Sendable {
    private let root: TOMLTable

    /// The keys of `text`; a text that does not parse has none (its parse error is reported
    /// on its own).
    package init(text: String) {
        root = (try? TOMLDocument.parse(text))?.root ?? TOMLTable(line: 1)
    }

    /// The line of `key`'s value, or nil when the file does not set it (the default is in
    /// force). A part `name[N]` is the Nth (from 1) table of `[[name]]`.
    package func line(of key: String) -> Int? {
        var table: TOMLTable? = root
        var value: TOMLValue?
        for part in key.split(separator: ".") {
            guard let current = table else { return nil }
            var name = Substring(part)
            var index: Int?
            if let open = part.firstIndex(of: "["), part.hasSuffix("]") {
                name = part[..<open]
                index = Int(part[part.index(after: open)..<part.index(before: part.endIndex)])
            }
            guard var found = current[String(name)] else { return nil }
            if let index {
                guard let elements = found.array, elements.indices.contains(index - 1) else { return nil }
                found = elements[index - 1]
            }
            value = found
            table = found.table
        }
        return value?.line
    }
}
