/// What one step-up of a batch approves (SPEC §3.4), shown in its challenge event and bound
/// into the LDA challenge (`stepsign-lda-v3`) and the IDV `txn`.
public struct BatchManifest: Sendable, Equatable {
    /// How many payloads the batch signs.
    public var count: Int
    /// Their UTF-8 bytes, all together.
    public var bytes: Int
    /// The RFC 9162 Merkle root over the SHA-256 of each payload, in order, standard base64.
    public var root: String
    /// The items' distinct reasons, in the order they first appear.
    public var reasons: [String]

    public init(count: Int, bytes: Int, root: String, reasons: [String]) {
        self.count = count
        self.bytes = bytes
        self.root = root
        self.reasons = reasons
    }

    /// Writes `"manifest":{"count":…,"bytes":…,"root":…,"reasons":[…]}`.
    func write<Output>(as key: StaticString, to writer: inout JSONWriter<Output>) {
        writer.key(key)
        writer.beginObject()
        writer.member("count", count)
        writer.member("bytes", bytes)
        writer.member("root", root)
        writer.member("reasons", .array(reasons.map { .string($0) }))
        writer.endObject()
    }
}
