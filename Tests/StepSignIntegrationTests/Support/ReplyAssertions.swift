import Foundation
import StepSignProtocol
import StepSignClient
import StepSignCrypto
import StepSignFormat

extension ClientReply {
    /// `status.code` of the first event named `name`.
    func statusCode(of name: String) -> Int? {
        (event(name)?["status"])?["code"]?.int
    }
}

extension StepSignConnection {
    /// The daemon's public keys as a verifier would get them.
    func trustedKeys() throws -> TrustedKeys {
        let reply = try call("getPublicKeys")
        let data = Data((reply.result?["jwks"] ?? [:]).jsonBytes)
        return try TrustedKeys(parsing: String(decoding: data, as: UTF8.self))
    }

    /// Asks for a level-1 signature and answers the password challenge with `password`.
    func signWithPassword(user: String, password: String, payload: String = "pay 10 EUR to bob",
                          reason: String = "payment") throws -> ClientReply {
        let challenge = try call("authenticateUserAndSignData", [
            "user": user, "payload": payload, "reason": reason, "authLevel": 1, "authenticatorType": 0,
        ])
        guard challenge.code == 0 else { return challenge }
        return try call("setPassword", ["password": password, "challengeMode": 12])
    }
}
