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

    /// A reply to the request whose `id` is `id`. The engine's handlers leave `id` out (null) and
    /// the engine sets it once, from the request, so no handler can echo a wrong one.
    public init(id: JSONValue = .null, error: StepSignError? = nil, events: [Event] = [], result: JSONValue? = nil,
                closesConnection: Bool = false) {
        self.id = id
        self.error = error
        self.events = events
        self.result = result
        self.closesConnection = closesConnection
    }

    /// Writes the reply line, newline included: `id`, `error`, `events`, then `result` if any.
    public func write<Output>(to writer: inout JSONWriter<Output>) {
        writer.beginObject()
        writer.member("id", id)
        writer.key("error")
        writer.beginObject()
        writer.member("code", error?.code.rawValue ?? 0)
        writer.member("message", error?.message ?? "OK")
        writer.endObject()
        writer.key("events")
        writer.beginArray()
        for event in events {
            event.write(to: &writer)
        }
        writer.endArray()
        if let result { writer.member("result", result) }
        writer.endObject()
        writer.output.appendByte(0x0A)
    }

    /// Appends the reply line, newline included, to `bytes`.
    ///
    /// Not generic, so the writer, the events and the string escaper are compiled for a
    /// `[UInt8]` inside this module. The server writes each reply into one array per
    /// connection and copies it into the buffer it sends: writing through the generic
    /// `write(to:)` from another module ran unspecialized (a witness call per byte and
    /// run, and metadata lookups), 5 % of the daemon's samples at level 0 (issue 43).
    public func write(into bytes: inout [UInt8]) {
        var writer = JSONWriter(into: bytes)
        bytes = []
        write(to: &writer)
        bytes = writer.output
    }

    /// The reply line, newline included.
    public var line: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(2048) // a signing reply is about 1.3 KB; one allocation
        write(into: &bytes)
        return bytes
    }
}
