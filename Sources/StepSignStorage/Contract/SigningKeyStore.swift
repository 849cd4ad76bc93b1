import Foundation

/// The signing keys of every daemon instance on the store: their public halves, endorsements
/// and revocations (SPEC §5.2, §5.4). The private halves never reach the store.
public protocol SigningKeyStore: Sendable {
    // MARK: Signing keys

    /// All signing keys of every daemon instance, oldest first. At most one per instance is
    /// active.
    func signingKeys() async throws -> [SigningKeyRecord]

    /// Records a new signing key, held by the daemon `instance`, with its public half, and makes
    /// it that instance's only active key, atomically (keys of other instances are untouched;
    /// keys recorded before instances were, with instance "", count as the rotating
    /// instance's). `endorsement`, when given, is stored with it in the same step (SPEC §5.4:
    /// a daemon endorses its successor as it rotates). Throws
    /// ``StorageError/signingKeyExists(_:)`` if `kid` is known.
    func addSigningKey(kid: String, createdAt: Date, instance: String, publicKeyPEM: String?,
                       endorsement: String?) async throws

    /// Stores `endorsement` for the key `kid`, replacing any earlier one (the operator's root
    /// endorsement replaces a predecessor's). Returns false if there is no such key. The store
    /// does not check it: every daemon checks the chain itself when it reads the keys.
    func setSigningKeyEndorsement(kid: String, endorsement: String) async throws -> Bool

    /// Fills in the public half of a key recorded without one (before the column existed).
    /// A key that has one already keeps it.
    func recordSigningKeyPublicKey(kid: String, publicKeyPEM: String) async throws

    /// Marks the key revoked at `at` (and no longer active), by the revocation event at log
    /// index `logIndex` when given. Returns false if there is no such key or it was revoked
    /// already; a key revoked already without an index gets `logIndex` filled in. The caller
    /// makes another key active first.
    func revokeSigningKey(kid: String, at: Date, logIndex: Int64?) async throws -> Bool
}

extension SigningKeyStore {
    /// Records a new signing key for an unnamed instance, without its public half.
    public func addSigningKey(kid: String, createdAt: Date) async throws {
        try await addSigningKey(kid: kid, createdAt: createdAt, instance: "", publicKeyPEM: nil, endorsement: nil)
    }

    /// Records a new signing key held by `instance`, without its public half.
    public func addSigningKey(kid: String, createdAt: Date, instance: String) async throws {
        try await addSigningKey(kid: kid, createdAt: createdAt, instance: instance, publicKeyPEM: nil, endorsement: nil)
    }

    /// Records a new signing key held by `instance`, with its public half and no endorsement.
    public func addSigningKey(kid: String, createdAt: Date, instance: String, publicKeyPEM: String?) async throws {
        try await addSigningKey(kid: kid, createdAt: createdAt, instance: instance, publicKeyPEM: publicKeyPEM, endorsement: nil)
    }

    /// Marks the key revoked at `at`, with no log index.
    public func revokeSigningKey(kid: String, at: Date) async throws -> Bool {
        try await revokeSigningKey(kid: kid, at: at, logIndex: nil)
    }
}
