extension JSONValue {
    /// The integer, if this is an integral number that fits an `Int`.
    public var int: Int? { intValue.flatMap { Int(exactly: $0) } }

    /// The number, if this is one.
    public var doubleValue: Double? {
        switch self {
        case let .int(value): Double(value)
        case let .double(value): value
        default: nil
        }
    }

    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? {
        if case let .array(elements) = self { return elements }
        return nil
    }

    /// The members in order, if this is an object.
    public var members: [(String, JSONValue)]? {
        if case let .object(members) = self { return members }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The same value with every object's members sorted by name, at every depth (for output
    /// that scripts compare, such as the CLI's `--json`).
    public var sortingKeys: JSONValue {
        switch self {
        case let .array(elements): .array(elements.map(\.sortingKeys))
        case let .object(members): .object(members.map { ($0.0, $0.1.sortingKeys) }.sorted { $0.0 < $1.0 })
        default: self
        }
    }
}

/// A Swift value that has one JSON form: what a client may pass as a request parameter, so
/// that `["user": name, "authLevel": 1]` needs no `.string(…)`/`.int(…)` around each value.
public protocol JSONValueConvertible: Sendable {
    var jsonValue: JSONValue { get }
}

extension JSONValue: JSONValueConvertible {
    public var jsonValue: JSONValue { self }
}

extension String: JSONValueConvertible {
    public var jsonValue: JSONValue { .string(self) }
}

extension Bool: JSONValueConvertible {
    public var jsonValue: JSONValue { .bool(self) }
}

extension Int: JSONValueConvertible {
    public var jsonValue: JSONValue { .int(Int64(self)) }
}

extension Int64: JSONValueConvertible {
    public var jsonValue: JSONValue { .int(self) }
}

extension Double: JSONValueConvertible {
    public var jsonValue: JSONValue { .double(self) }
}

extension Array: JSONValueConvertible where Element: JSONValueConvertible {
    public var jsonValue: JSONValue { .array(map(\.jsonValue)) }
}

extension Optional: JSONValueConvertible where Wrapped: JSONValueConvertible {
    public var jsonValue: JSONValue { map(\.jsonValue) ?? .null }
}

extension Dictionary: JSONValueConvertible where Key == String, Value: JSONValueConvertible {
    /// An object with the members sorted by name (a dictionary has no order of its own).
    public var jsonValue: JSONValue { .object(map { ($0.key, $0.value.jsonValue) }.sorted { $0.0 < $1.0 }) }
}
