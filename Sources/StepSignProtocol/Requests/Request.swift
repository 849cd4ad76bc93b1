/// One request line: `{"id": <number or string>, "op": "<operation>", ...parameters}` (SPEC §3).
public struct Request: Sendable {
    /// The `id` to echo; `.null` when the line had none we could read.
    public var id: JSONValue
    /// The operation name.
    public var op: String
    /// Every member of the request object, `id` and `op` included.
    public var members: [(String, JSONValue)]

    public init(id: JSONValue, op: String, members: [(String, JSONValue)]) {
        self.id = id
        self.op = op
        self.members = members
    }

    /// Decodes a request line (without its newline).
    ///
    /// On failure the error carries whatever `id` could be read, so the reply can echo it.
    public static func decode(_ line: some Collection<UInt8>) -> Result<Request, RequestDecodingError> {
        let value: JSONValue
        do {
            value = try JSONParser.parse(line)
        } catch {
            return .failure(RequestDecodingError(id: .null, error: .invalid(error.description)))
        }
        guard case let .object(members) = value else {
            return .failure(RequestDecodingError(id: .null, error: .invalid("a request is a JSON object")))
        }
        let id = value["id"] ?? .null
        switch id {
        case .int, .double, .string: break
        default: return .failure(RequestDecodingError(id: .null, error: .invalid("\"id\" must be a number or a string")))
        }
        guard let op = value["op"]?.stringValue else {
            return .failure(RequestDecodingError(id: id, error: .invalid("\"op\" must be a string")))
        }
        return .success(Request(id: id, op: op, members: members))
    }

    /// Refuses members other than `id`, `op` and `allowed`: a misspelt parameter is an error,
    /// not a silently ignored one.
    /// (An array, not a set: a handful of names, searched without hashing or allocating.)
    func allowOnly(_ allowed: [String]) throws(StepSignError) {
        for (key, _) in members where key != "id" && key != "op" && !allowed.contains(key) {
            throw .invalid("unknown parameter \"\(key)\" for \(op)")
        }
    }

    /// A parameter of any JSON type (absent or null is nil).
    func member(_ key: String) -> JSONValue? {
        guard let value = members.first(where: { $0.0 == key })?.1 else { return nil }
        if case .null = value { return nil }
        return value
    }

    /// A required string parameter.
    func string(_ key: String) throws(StepSignError) -> String {
        guard let value = try optionalString(key) else { throw .invalid("missing parameter \"\(key)\"") }
        return value
    }

    /// An optional string parameter (absent or null is nil).
    func optionalString(_ key: String) throws(StepSignError) -> String? {
        guard let value = member(key) else { return nil }
        guard let string = value.stringValue else { throw .invalid("\"\(key)\" must be a string") }
        return string
    }

    /// A required integer parameter within `range`.
    func int(_ key: String, in range: ClosedRange<Int>) throws(StepSignError) -> Int {
        guard let value = try optionalInt(key, in: range) else { throw .invalid("missing parameter \"\(key)\"") }
        return value
    }

    /// An optional integer parameter within `range`.
    func optionalInt(_ key: String, in range: ClosedRange<Int>) throws(StepSignError) -> Int? {
        guard let value = member(key) else { return nil }
        guard let number = value.intValue, let int = Int(exactly: number), range.contains(int) else {
            throw .invalid("\"\(key)\" must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return int
    }

    /// An optional boolean parameter.
    func optionalBool(_ key: String) throws(StepSignError) -> Bool? {
        guard let value = member(key) else { return nil }
        guard let flag = value.boolValue else { throw .invalid("\"\(key)\" must be true or false") }
        return flag
    }
}

/// A line that is not a request, with the `id` to echo (`.null` if none could be read).
public struct RequestDecodingError: Error, Sendable {
    public var id: JSONValue
    public var error: StepSignError
}
