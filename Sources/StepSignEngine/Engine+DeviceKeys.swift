import Foundation
import StepSignProtocol
import StepSignConfig
import StepSignCrypto
import StepSignStorage

extension Engine {
    /// The longest device key label.
    static let deviceKeyLabelLimit = 64

    /// `enrollDeviceKey` (SPEC §3.2): registers an LDA device key for the session's user, on a
    /// login that still holds (else 5), younger than `lda.enroll_fresh_seconds` (else 11: log
    /// in again), of a user who is not blocked (else 148).
    /// `fido2` instead of `publicKey` enrolls a FIDO2 security key (SPEC §5.7).
    func enrollDeviceKey(publicKey: JSONValue?, label: String?, fido2: JSONValue?, session: inout Session,
                         context: RequestContext) async throws -> Reply {
        let login = try await requireLogin(&session, context: context, blocked: .userBlocked)
        guard context.now.timeIntervalSince(login.loggedInAt) <= Double(context.config.lda.enrollFreshSeconds) else {
            throw StepSignError.wrongState(
                "enrolling a device key needs a login from the last \(context.config.lda.enrollFreshSeconds) seconds; log in again")
        }
        let kid = try await addDeviceKey(publicKey: publicKey, fido2: fido2, label: label, user: login.user, context: context)
        return Reply(result: ["deviceKeyId": .string(kid)])
    }

    /// `admin.enrollDeviceKey`: registers an LDA device key for any user.
    func adminEnrollDeviceKey(user: String, publicKey: JSONValue?, label: String?, fido2: JSONValue?,
                              context: RequestContext) async throws -> Reply {
        try UserName.validate(user)
        let kid = try await addDeviceKey(publicKey: publicKey, fido2: fido2, label: label, user: user, context: context)
        return Reply(result: ["deviceKeyId": .string(kid)])
    }

    /// `admin.revokeDeviceKey`: the key stops answering challenges at once.
    func adminRevokeDeviceKey(user: String, kid: String, context: RequestContext) async throws -> Reply {
        try await validateExistingName(user)
        guard try await credentials.store.revokeDeviceKey(user: user, kid: kid, at: context.now) else {
            throw StepSignError.invalid("user \"\(user)\" has no active device key \"\(kid)\"")
        }
        logger.notice("device key revoked", metadata: ["user": "\(user)", "kid": "\(kid)"])
        try await recordEvent(.deviceKeyRevoked, user: user, details: [("deviceKeyId", .string(kid))], context: context)
        return Reply(result: [:])
    }

    private func addDeviceKey(publicKey: JSONValue?, fido2: JSONValue?, label: String?, user: String,
                              context: RequestContext) async throws -> String {
        guard context.config.lda.enabled else { throw StepSignError(.notSupported, "device keys are disabled (lda.enabled)") }
        let credential = try fido2.map { value throws(StepSignError) in
            guard publicKey == nil else { throw .invalid("give \"publicKey\" or \"fido2\", not both") }
            return try FIDO2Enrollment(value, config: context.config.lda)
        }
        let key = try credential?.publicKey ?? Self.deviceKey(from: publicKey)
        let label = label ?? ""
        guard label.count <= Self.deviceKeyLabelLimit else {
            throw StepSignError.invalid("\"label\" must be at most \(Self.deviceKeyLabelLimit) characters")
        }
        let jwk = key.jwkJSON
        do {
            let record = DeviceKeyRecord(kid: key.thumbprint, user: user, publicKeyJWK: jwk, label: label, createdAt: context.now)
            if let credential {
                try await credentials.store.addFIDO2DeviceKey(record, credentialID: credential.credentialID)
            } else {
                try await credentials.store.addDeviceKey(record)
            }
        } catch StorageError.noSuchUser {
            throw StepSignError.invalid("no user \"\(user)\"")
        } catch StorageError.deviceKeyExists {
            throw StepSignError.invalid("device key \(key.thumbprint) is already enrolled")
        }
        logger.notice("device key enrolled", metadata: ["user": "\(user)", "kid": "\(key.thumbprint)",
                                                        "fido2": "\(credential != nil)"])
        try await recordEvent(.deviceKeyEnrolled, user: user,
                              details: [("deviceKeyId", .string(key.thumbprint)), ("label", .string(label))], context: context)
        return key.thumbprint
    }

    /// A P-256 public key given as SPKI PEM text, a JWK object, or a JWK as a JSON string.
    static func deviceKey(from value: JSONValue?) throws(StepSignError) -> P256PublicKey {
        let jwkBytes: [UInt8]
        switch value {
        case let .string(text)? where text.contains("-----BEGIN PUBLIC KEY-----"):
            do { return try P256PublicKey(spkiPEM: text) } catch { throw .invalid("\"publicKey\" is not a P-256 public key: \(error)") }
        case let .string(text)?:
            jwkBytes = Array(text.utf8)
        case let .object(members)?:
            jwkBytes = JSONValue.object(members).jsonBytes
        default:
            throw .invalid("\"publicKey\" must be a PEM public key or a JWK")
        }
        do {
            return try P256PublicKey(jwkJSON: jwkBytes)
        } catch {
            throw .invalid("\"publicKey\" is not a P-256 JWK: \(error)")
        }
    }
}
