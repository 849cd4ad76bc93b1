/// The `details` of `onAuthenticateUserAndSignData` (SPEC §3.1).
public struct SigningDetails: Sendable, Equatable {
    public var dataPayload: String
    public var dataPayloadLength: Int
    public var reason: String
    /// The JWS; empty when nothing was signed.
    public var payloadSignature: String
    /// The signature ID; empty when nothing was signed.
    public var dataSignatureID: String
    public var authLevel: Int
    public var authenticatorType: Int
    public var authenticatorUsed: String
    /// The signature's index in the transparency log (its ledger seq − 1, SPEC §5.5); nil when
    /// nothing was signed (the member is left out).
    public var logIndex: Int64?
    /// The signature whose step-up this one reused (SPEC §3.4), as the claims' `stepUp`; nil
    /// (the member left out) when it stepped up itself.
    public var reusedFrom: String?
    /// True when this reply repeats the one a request with the same `idempotencyKey` got
    /// (SPEC §3): nothing was signed now. The member is left out when false.
    public var replayed = false

    public init(dataPayload: String, dataPayloadLength: Int, reason: String, payloadSignature: String,
                dataSignatureID: String, authLevel: Int, authenticatorType: Int, authenticatorUsed: String) {
        self.dataPayload = dataPayload
        self.dataPayloadLength = dataPayloadLength
        self.reason = reason
        self.payloadSignature = payloadSignature
        self.dataSignatureID = dataSignatureID
        self.authLevel = authLevel
        self.authenticatorType = authenticatorType
        self.authenticatorUsed = authenticatorUsed
    }

    /// Writes `"key":{…}` with the members in the order of SPEC §3.1.
    func write<Output>(as key: StaticString, to writer: inout JSONWriter<Output>) {
        writer.key(key)
        write(to: &writer)
    }

    /// Writes the object `{…}` with the members in the order of SPEC §3.1.
    func write<Output>(to writer: inout JSONWriter<Output>) {
        writer.beginObject()
        writer.member("dataPayload", dataPayload)
        writer.member("dataPayloadLength", dataPayloadLength)
        writer.member("reason", reason)
        writer.member("payloadSignature", payloadSignature)
        writer.member("dataSignatureID", dataSignatureID)
        writer.member("authLevel", authLevel)
        writer.member("authenticatorType", authenticatorType)
        writer.member("authenticatorUsed", authenticatorUsed)
        if let logIndex { writer.member("logIndex", logIndex) }
        if let reusedFrom {
            writer.key("stepUp")
            writer.beginObject()
            writer.member("reusedFrom", reusedFrom)
            writer.endObject()
        }
        if replayed { writer.member("replayed", true) }
        writer.endObject()
    }
}
