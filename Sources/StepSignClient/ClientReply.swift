import Foundation

/// A reply line of SPEC §3, decoded.
public struct ClientReply: @unchecked Sendable {
    /// The echoed `id`.
    public let id: Any
    /// `error.code`; 0 means accepted.
    public let code: Int
    /// `error.message`.
    public let message: String
    /// The events, in order.
    public let events: [[String: Any]]
    /// `result` of public and admin operations.
    public let result: [String: Any]?
    /// The whole reply object.
    public let object: [String: Any]

    /// Decodes a reply line (without its newline).
    public init(line: [UInt8]) throws {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
              let error = object["error"] as? [String: Any],
              let code = error["code"] as? Int,
              let events = object["events"] as? [[String: Any]]
        else { throw ClientError.malformedReply(String(decoding: line, as: UTF8.self)) }
        self.object = object
        self.id = object["id"] ?? NSNull()
        self.code = code
        self.message = error["message"] as? String ?? ""
        self.events = events
        self.result = object["result"] as? [String: Any]
    }

    /// The name of each event, in order.
    public var eventNames: [String] { events.compactMap { $0["event"] as? String } }

    /// The first event named `name`.
    public func event(_ name: String) -> [String: Any]? {
        events.first { $0["event"] as? String == name }
    }
}
