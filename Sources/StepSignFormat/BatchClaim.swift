import StepSignProtocol

/// The `batch` claim of a signature made for one item of a batch (SPEC §3.4): which batch,
/// which item, and the manifest root the step-up approved.
public struct BatchClaim: Codable, Sendable, Equatable {
    /// The batch ID (UUIDv7), the same in every signature of the batch.
    public var id: String
    /// The item's index in the batch, from 0.
    public var index: Int
    /// How many items the batch signed.
    public var count: Int
    /// The manifest's root (``BatchRoot``), standard base64.
    public var root: String

    public init(id: String, index: Int, count: Int, root: String) {
        self.id = id
        self.index = index
        self.count = count
        self.root = root
    }

    func write<Output>(into writer: inout JSONWriter<Output>) {
        writer.key("batch")
        writer.beginObject()
        writer.member("id", id)
        writer.member("index", index)
        writer.member("count", count)
        writer.member("root", root)
        writer.endObject()
    }
}
