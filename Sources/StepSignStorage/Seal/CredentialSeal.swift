import Foundation
import StepSignCrypto

/// The seal of credential records (SPEC §5.4): HMAC-SHA-256, under a key kept outside the
/// database, over each user record and what it is bound to (``SealBinding``), and over each open
/// activation code. Whoever can write the database but not read the key can neither write a
/// record the daemon uses nor put back an older one.
///
/// Both stores seal and check through this one type, inside the transaction that writes or
/// reads the record, so the rule lives in one place. What is not sealed: the attempt counters
/// (`failed_attempts`; SPEC §5.4: losing one costs at most a reset of `max_attempts`).
public struct CredentialSeal: Sendable {
    /// The length of a seal key: 32 random bytes.
    public static let keyLength = 32

    private let key: [UInt8]

    /// A seal under `key`, which must be ``keyLength`` bytes.
    public init(key: [UInt8]) throws {
        guard key.count == Self.keyLength else { throw CredentialSealError.badKeyLength(key.count) }
        self.key = key
    }

    /// A new random key.
    public static func newKey() throws -> [UInt8] {
        try SecureRandom.bytes(count: keyLength)
    }

    /// The value a store keeps to recognise its key (`store_secrets` row `seal_check`): a
    /// daemon started with another key is refused before it calls every record broken.
    public var keyCheck: [UInt8] {
        HMACSHA256.mac(key: key, message: Array("stepsign-seal-key-check-v1".utf8))
    }

    /// The HMAC of `message` under the seal key (for the seals of other files of this module).
    func mac(_ message: SealMessage) -> [UInt8] {
        HMACSHA256.mac(key: key, message: message.bytes)
    }

    // MARK: Users

    /// The seal of `user` bound to `binding`. Only the sealed fields count: not the attempt
    /// counter's `failedAttempts`, not ``UserRecord/sealFailure``.
    package func seal(_ user: UserRecord, binding: SealBinding) -> [UInt8] {
        var message = SealMessage(domain: "stepsign-user-seal-v1")
        message.append(user.name)
        message.append(user.passwordHash)
        message.append(user.passwordChangedAt)
        message.append(user.passwordExpired)
        message.append(user.mustChangePassword)
        message.append(user.blocked)
        message.append(user.blockedUntil)
        message.append(user.createdAt)
        message.append(user.credentialToken.bytes)
        message.append(binding.eventIndex)
        message.append(binding.historyDigest)
        message.append(binding.deviceKeysDigest)
        return HMACSHA256.mac(key: key, message: message.bytes)
    }

    /// Why the stored `user` may not be used, or nil: its `seal` must match it and its
    /// `binding`, and the binding's event must be the user's latest in the log
    /// (`latestEventIndex`, -1 for none). The digests of the history and device keys are
    /// compared by ``failure(of:binding:seal:latestEventIndex:historyDigest:deviceKeysDigest:)``.
    package func failure(of user: UserRecord, binding: SealBinding, seal: [UInt8]?,
                         latestEventIndex: Int64) -> SealFailure? {
        guard let seal else { return .missing }
        guard ConstantTime.equals(seal, self.seal(user, binding: binding)) else { return .mismatch }
        guard binding.eventIndex == latestEventIndex else {
            return .rolledBack(recordIndex: binding.eventIndex, latestIndex: latestEventIndex)
        }
        return nil
    }

    /// ``failure(of:binding:seal:latestEventIndex:)``, and the history and device keys as stored
    /// now must have the digests the record was sealed with.
    package func failure(of user: UserRecord, binding: SealBinding, seal: [UInt8]?, latestEventIndex: Int64,
                         historyDigest: [UInt8], deviceKeysDigest: [UInt8]) -> SealFailure? {
        if let failure = failure(of: user, binding: binding, seal: seal, latestEventIndex: latestEventIndex) {
            return failure
        }
        guard ConstantTime.equals(historyDigest, binding.historyDigest),
              ConstantTime.equals(deviceKeysDigest, binding.deviceKeysDigest) else { return .partsChanged }
        return nil
    }

    /// The digest of a password history (earlier hashes with the time each was set), oldest first.
    package static func historyDigest(_ entries: [(hash: String, setAt: Date)]) -> [UInt8] {
        var message = SealMessage(domain: "stepsign-history-v1")
        message.append(Int64(entries.count))
        for entry in entries {
            message.append(entry.hash)
            message.append(entry.setAt)
        }
        return SHA256.hash(message.bytes)
    }

    /// The digest of a user's device keys, revoked ones included, in kid order.
    package static func deviceKeysDigest(_ keys: [DeviceKeyRecord]) -> [UInt8] {
        var message = SealMessage(domain: "stepsign-device-keys-v1")
        let sorted = keys.sorted { Array($0.kid.utf8).lexicographicallyPrecedes(Array($1.kid.utf8)) }
        message.append(Int64(sorted.count))
        for key in sorted {
            message.append(key.kid)
            message.append(key.publicKeyJWK)
            message.append(key.label)
            message.append(key.createdAt)
            message.append(key.revokedAt)
        }
        return SHA256.hash(message.bytes)
    }

    // MARK: Activation codes

    /// The seal of an open activation code (not of its wrong-answer count).
    package func seal(_ code: ActivationCodeRecord) -> [UInt8] {
        var message = SealMessage(domain: "stepsign-activation-code-seal-v1")
        message.append(code.user)
        message.append(code.codeHash)
        message.append(code.verificationKey)
        message.append(code.expiresAt)
        return HMACSHA256.mac(key: key, message: message.bytes)
    }

    /// Whether `seal` is that of `code`.
    package func verifies(_ code: ActivationCodeRecord, seal: [UInt8]?) -> Bool {
        guard let seal else { return false }
        return ConstantTime.equals(seal, self.seal(code))
    }
}

/// Why a ``CredentialSeal`` cannot be made.
public enum CredentialSealError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key is not ``CredentialSeal/keyLength`` bytes.
    case badKeyLength(Int)

    public var description: String {
        switch self {
        case let .badKeyLength(count): "a seal key must be \(CredentialSeal.keyLength) bytes, not \(count)"
        }
    }
}
