/// The parameters of `authenticateUserAndSignBatch` (SPEC §3.4): the items, in order, and the
/// step-up that covers them all.
public struct SignBatchParameters: Sendable {
    /// One payload of a batch with the reason it is signed for.
    public struct Item: Sendable, Equatable {
        public var payload: String
        public var reason: String

        public init(payload: String, reason: String) {
            self.payload = payload
            self.reason = reason
        }
    }

    public var items: [Item]
    public var authLevel: Int
    public var authenticatorType: Int
    /// The user to sign for when the session is not logged in; absent or the login's user when it is.
    public var user: String?
    /// The caller's key for retries (SPEC §3, "Idempotent retries"); checked by the engine.
    public var idempotencyKey: String?

    public init(items: [Item], authLevel: Int, authenticatorType: Int, user: String?, idempotencyKey: String? = nil) {
        self.items = items
        self.authLevel = authLevel
        self.authenticatorType = authenticatorType
        self.user = user
        self.idempotencyKey = idempotencyKey
    }

    /// `items`: a non-empty array of objects with exactly the string members `payload` and
    /// `reason`. Their lengths and the batch's size are the engine's to check (they are
    /// settings and counting rules, not types).
    static func items(_ value: JSONValue?) throws(StepSignError) -> [Item] {
        guard let value else { throw .invalid("missing parameter \"items\"") }
        guard let array = value.arrayValue else { throw .invalid("\"items\" must be an array of {payload, reason}") }
        guard !array.isEmpty else { throw .invalid("\"items\" must not be empty") }
        var items: [Item] = []
        items.reserveCapacity(array.count)
        for (index, element) in array.enumerated() {
            guard let members = element.members else { throw .invalid("items[\(index)] must be an object {payload, reason}") }
            var payload: String?, reason: String?
            for (key, member) in members {
                switch key {
                case "payload":
                    guard let text = member.stringValue else { throw .invalid("items[\(index)].payload must be a string") }
                    payload = text
                case "reason":
                    guard let text = member.stringValue else { throw .invalid("items[\(index)].reason must be a string") }
                    reason = text
                default:
                    throw .invalid("unknown member \"\(key)\" in items[\(index)]")
                }
            }
            guard let payload else { throw .invalid("missing items[\(index)].payload") }
            guard let reason else { throw .invalid("missing items[\(index)].reason") }
            items.append(Item(payload: payload, reason: reason))
        }
        return items
    }
}
