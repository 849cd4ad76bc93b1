/// Reads one TOML table of the config file into typed values, naming file, line and dotted
/// key in every error.
///
/// Missing keys take the given default. Values of the wrong type or out of range are
/// errors at the value's line; keys and tables that are not known are errors at theirs.
struct ConfigTableReader {
    let file: String
    /// The dotted path of this table, "" for the root.
    let path: String
    let table: TOMLTable

    init(file: String, path: String, table: TOMLTable) {
        self.file = file
        self.path = path
        self.table = table
    }

    /// `key` with this table's path in front: `password.max_attempts`.
    func keyPath(_ key: String) -> String {
        path.isEmpty ? key : path + "." + key
    }

    /// An error about `key`, at the line of `value` (or of this table if the key is absent).
    func error(_ key: String, _ value: TOMLValue?, _ message: String) -> ConfigError {
        ConfigError(file: file, line: value?.line ?? table.line, key: keyPath(key), message: message)
    }

    /// Refuses the first key or table, in the order written, that is not in `known`.
    func rejectUnknown(_ known: [String]) throws(ConfigError) {
        for entry in table.entries where !known.contains(entry.key) {
            let key = keyPath(entry.key)
            if entry.value.table != nil {
                throw ConfigError(
                    file: file, line: entry.value.line, key: key,
                    message: "unknown table [\(key)]")
            }
            throw ConfigError(
                file: file, line: entry.value.line, key: key,
                message: "unknown key (known keys here: \(known.joined(separator: ", ")))")
        }
    }

    /// The sub-table `key`; an empty one at this table's line if absent.
    func table(_ key: String) throws(ConfigError) -> ConfigTableReader {
        guard let value = table[key] else {
            return ConfigTableReader(file: file, path: keyPath(key), table: TOMLTable(line: table.line))
        }
        guard let sub = value.table else {
            throw error(key, value, "expected a table [\(keyPath(key))], found \(value)")
        }
        return ConfigTableReader(file: file, path: keyPath(key), table: sub)
    }

    /// A string; `check` returns a complaint about a string it refuses.
    func string(
        _ key: String, default defaultValue: String, check: (String) -> String? = { _ in nil }
    ) throws(ConfigError) -> String {
        guard let value = table[key] else { return defaultValue }
        guard let s = value.string else {
            throw error(key, value, "expected a string, found \(value)")
        }
        if s.unicodeScalars.contains(where: { $0.value == 0 }) {
            throw error(key, value, "must not contain a NUL character")
        }
        if let complaint = check(s) {
            throw error(key, value, complaint)
        }
        return s
    }

    /// A boolean.
    func bool(_ key: String, default defaultValue: Bool) throws(ConfigError) -> Bool {
        guard let value = table[key] else { return defaultValue }
        guard let b = value.boolean else {
            throw error(key, value, "expected true or false, found \(value)")
        }
        return b
    }

    /// An integer within `range`.
    func integer<T: FixedWidthInteger>(
        _ key: String, default defaultValue: T, in range: ClosedRange<T>
    ) throws(ConfigError) -> T {
        guard let value = table[key] else { return defaultValue }
        guard let i = value.integer, let t = T(exactly: i), range.contains(t) else {
            throw error(key, value, "expected an integer from \(range.lowerBound) to \(range.upperBound), found \(value)")
        }
        return t
    }

    /// An array of strings; `check` returns a complaint about an element it refuses.
    func stringArray(
        _ key: String, default defaultValue: [String], check: (String) -> String? = { _ in nil }
    ) throws(ConfigError) -> [String] {
        guard let value = table[key] else { return defaultValue }
        guard let elements = value.array else {
            throw error(key, value, "expected an array of strings, found \(value)")
        }
        var out: [String] = []
        for element in elements {
            guard let s = element.string else {
                throw error(key, element, "expected an array of strings, found \(element) in it")
            }
            if s.unicodeScalars.contains(where: { $0.value == 0 }) {
                throw error(key, element, "must not contain a NUL character")
            }
            if let complaint = check(s) {
                throw error(key, element, complaint)
            }
            out.append(s)
        }
        return out
    }

    /// An array of integers, each within `range`.
    func integerArray<T: FixedWidthInteger>(
        _ key: String, default defaultValue: [T], in range: ClosedRange<T>
    ) throws(ConfigError) -> [T] {
        guard let value = table[key] else { return defaultValue }
        guard let elements = value.array else {
            throw error(key, value, "expected an array of integers, found \(value)")
        }
        var out: [T] = []
        for element in elements {
            guard let i = element.integer, let t = T(exactly: i), range.contains(t) else {
                throw error(
                    key, element,
                    "expected an array of integers from \(range.lowerBound) to \(range.upperBound), found \(element) in it")
            }
            out.append(t)
        }
        return out
    }
}
