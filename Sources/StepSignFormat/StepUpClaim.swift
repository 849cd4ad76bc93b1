import StepSignProtocol

/// The `stepUp` claim of a signature that reused an earlier step-up (SPEC §3.4): the
/// signature ID of the signature whose step-up it reused.
public struct StepUpClaim: Codable, Sendable, Equatable {
    /// The signature made with the step-up this one reused.
    public var reusedFrom: String

    public init(reusedFrom: String) {
        self.reusedFrom = reusedFrom
    }

    func write<Output>(into writer: inout JSONWriter<Output>) {
        writer.key("stepUp")
        writer.beginObject()
        writer.member("reusedFrom", reusedFrom)
        writer.endObject()
    }
}
