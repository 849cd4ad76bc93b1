import StepSignProtocol

/// A reply line of SPEC §3, decoded by the protocol module's strict parser.
public struct ClientReply: Sendable {
    /// The echoed `id`.
    public let id: JSONValue
    /// `error.code`; 0 means accepted.
    public let code: Int
    /// `error.message`.
    public let message: String
    /// The events, in order (each an object with its `event` name first).
    public let events: [JSONValue]
    /// `result` of public and admin operations.
    public let result: JSONValue?
    /// The whole reply object.
    public let object: JSONValue

    /// Decodes a reply line (without its newline).
    public init(line: [UInt8]) throws {
        guard let object = try? JSONParser.parse(line),
              let code = object["error"]?["code"]?.int,
              let events = object["events"]?.arrayValue
        else { throw ClientError.malformedReply(String(decoding: line, as: UTF8.self)) }
        self.object = object
        self.id = object["id"] ?? .null
        self.code = code
        self.message = object["error"]?["message"]?.stringValue ?? ""
        self.events = events
        self.result = object["result"]
    }

    /// The error, when the request was refused (nil when accepted or for a code this client
    /// does not know).
    public var error: StepSignError? {
        guard code != 0, let known = StepSignError.Code(rawValue: code) else { return nil }
        return StepSignError(known, message)
    }

    /// The name of each event, in order.
    public var eventNames: [String] { events.compactMap { $0["event"]?.stringValue } }

    /// The first event named `name`.
    public func event(_ name: String) -> JSONValue? {
        events.first { $0["event"]?.stringValue == name }
    }
}
