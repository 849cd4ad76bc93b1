/// The one reply line every request gets (SPEC §3).
public struct Reply: Sendable {
    public var id: JSONValue
    /// nil means accepted (code 0).
    public var error: StepSignError?
    public var events: [Event]
    /// The `result` of public and admin operations.
    public var result: JSONValue?
    /// Whether the server should close the connection after sending this reply.
    public var closesConnection: Bool

    public init(id: JSONValue, error: StepSignError? = nil, events: [Event] = [], result: JSONValue? = nil,
                closesConnection: Bool = false) {
        self.id = id
        self.error = error
        self.events = events
        self.result = result
        self.closesConnection = closesConnection
    }

    /// The reply as a JSON object.
    public var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", id),
            ("error", [
                "code": .int(Int64(error?.code.rawValue ?? 0)),
                "message": .string(error?.message ?? "OK"),
            ]),
            ("events", .array(events.map(\.json))),
        ]
        if let result { members.append(("result", result)) }
        return .object(members)
    }

    /// The reply line, newline included.
    public var line: [UInt8] {
        var out = JSONWriter.bytes(json)
        out.append(0x0A)
        return out
    }
}
