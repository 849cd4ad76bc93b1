import StepSignProtocol

/// One TOML value and the line it was written on.
///
/// For a key/value pair the line is that of the key; for an array element, that of the
/// element; for a table, that of the header (or first dotted key) that created it.
public struct TOMLValue: Sendable, Equatable {
    /// The kinds of value stepsign's config reader understands.
    public enum Kind: Sendable, Equatable {
        case string(String)
        case integer(Int64)
        case float(Double)
        case boolean(Bool)
        case array([TOMLValue])
        case table(TOMLTable)
    }

    /// The value itself.
    public var kind: Kind
    /// The 1-based line the value was written on.
    public var line: Int

    public init(_ kind: Kind, line: Int) {
        self.kind = kind
        self.line = line
    }

    /// The string, if this is a string.
    public var string: String? {
        if case .string(let s) = kind { return s }
        return nil
    }

    /// The integer, if this is an integer.
    public var integer: Int64? {
        if case .integer(let i) = kind { return i }
        return nil
    }

    /// The boolean, if this is a boolean.
    public var boolean: Bool? {
        if case .boolean(let b) = kind { return b }
        return nil
    }

    /// The elements, if this is an array.
    public var array: [TOMLValue]? {
        if case .array(let a) = kind { return a }
        return nil
    }

    /// The table, if this is a table.
    public var table: TOMLTable? {
        if case .table(let t) = kind { return t }
        return nil
    }

    /// A short English name of the kind, with its article: "a string", "an integer", ...
    public var kindName: String {
        switch kind {
        case .string: "a string"
        case .integer: "an integer"
        case .float: "a float"
        case .boolean: "a boolean"
        case .array: "an array"
        case .table: "a table"
        }
    }
}

extension TOMLValue: CustomStringConvertible {
    /// The value as it could be written in TOML (tables abbreviated), for error messages.
    public var description: String {
        switch kind {
        case .string(let s): TOMLValue.quoted(s)
        case .integer(let i): String(i)
        case .float(let d): String(d)
        case .boolean(let b): b ? "true" : "false"
        case .array(let a): "[" + a.map(\.description).joined(separator: ", ") + "]"
        case .table: "a table"
        }
    }

    /// `s` as a TOML basic string: the JSON escaper's output with DEL escaped too (`\"`,
    /// `\\`, `\n`, `\r`, `\t`, `\u00XX` for other controls are the same in both languages).
    static func quoted(_ s: String) -> String {
        JSONString.quoted(s, escapingDelete: true)
    }
}
