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

    var json: JSONValue {
        [
            "dataPayload": .string(dataPayload),
            "dataPayloadLength": .int(Int64(dataPayloadLength)),
            "reason": .string(reason),
            "payloadSignature": .string(payloadSignature),
            "dataSignatureID": .string(dataSignatureID),
            "authLevel": .int(Int64(authLevel)),
            "authenticatorType": .int(Int64(authenticatorType)),
            "authenticatorUsed": .string(authenticatorUsed),
        ]
    }
}
