import Foundation

/// Who may sign and how they prove it: users, their passwords and history, device keys and
/// activation codes (SPEC §5). Each record is sealed (SPEC §5.4): a read checks the seal, a
/// write seals again, in the transaction that reads or writes the record (``CredentialSeal``).
public protocol CredentialStore: Sendable {
    /// Whether other daemons change the credentials in this store (PostgreSQL). When false
    /// (SQLite: one daemon per file), every change goes through this daemon's engine, which
    /// records an event for each.
    var isShared: Bool { get }

    // MARK: Users

    /// The user called `name` (names are case-sensitive), or nil.
    func user(named name: String) async throws -> UserRecord?

    /// Adds a user with a new ``CredentialToken`` (never one a removed user of the same name
    /// had). Throws ``StorageError/userExists(_:)`` if the name is taken.
    func addUser(_ new: NewUser) async throws

    /// Removes a user with their password history, device keys and activation code.
    /// Ledger rows naming the user stay. Returns false if there was no such user.
    func removeUser(named name: String) async throws -> Bool

    /// All users, sorted by name (byte order).
    func listUsers() async throws -> [UserRecord]

    /// Clears `blocked`, `blockedUntil` and `failedAttempts`. Returns false if no such user.
    func unlockUser(named name: String) async throws -> Bool

    /// Forces the user's password to count as expired and makes a new ``CredentialToken``
    /// (the user's logins end). Returns false if no such user.
    func expirePassword(named name: String) async throws -> Bool

    // MARK: Passwords

    /// Replaces the user's password hash.
    ///
    /// Sets the change time to `at`, clears `passwordExpired` and `mustChangePassword`,
    /// pushes the previous hash into the history, keeps at most `historyLimit` earlier
    /// hashes, and makes a new ``CredentialToken`` (the user's other logins end), which it
    /// returns so that the login that changed the password can go on with it.
    /// Throws ``StorageError/noSuchUser(_:)`` if the user does not exist.
    @discardableResult
    func setPassword(user: String, hash: String, at: Date, historyLimit: Int) async throws -> CredentialToken

    /// Replaces the user's password hash with `replacement` (the same password hashed with
    /// other parameters) if it is still `expected`; changes nothing else (not the change time,
    /// not the history). Returns whether it did.
    func rehashPassword(user: String, expected: String, replacement: String) async throws -> Bool

    /// Up to `limit` password hashes of the user, newest first: the current hash, then the
    /// earlier ones. Empty if there is no such user.
    func passwordHistory(user: String, limit: Int) async throws -> [String]

    // MARK: Device keys

    /// Registers an LDA device key. Throws ``StorageError/noSuchUser(_:)`` or
    /// ``StorageError/deviceKeyExists(_:)``.
    func addDeviceKey(_ key: DeviceKeyRecord) async throws

    /// The user's device keys, oldest first; revoked ones only if `includeRevoked`.
    func deviceKeys(user: String, includeRevoked: Bool) async throws -> [DeviceKeyRecord]

    /// Marks a key of the user revoked at `at`. Returns false if the user has no such
    /// unrevoked key.
    func revokeDeviceKey(user: String, kid: String, at: Date) async throws -> Bool

    /// Adds a FIDO2 security key as a device key (SPEC §5.7): `key` as ``addDeviceKey(_:)``
    /// adds it, with the credential's ID and its signature counter (0 at enrolment).
    func addFIDO2DeviceKey(_ key: DeviceKeyRecord, credentialID: String) async throws

    /// The FIDO2 credential behind device key `kid`, or nil for a key that is not one.
    func fido2Credential(kid: String) async throws -> FIDO2Credential?

    /// Consumes a FIDO2 assertion of device key `kid` in one transaction: marks `nonce` used
    /// until `expiresAt` (as ``CounterStore/useOnce(_:expiresAt:now:)``) and raises the key's
    /// stored signature counter to `signCount`, which must be above it (or 0 where both are
    /// 0: an authenticator that does not count). A nonce used before changes nothing; a
    /// counter that does not grow leaves the counter as it was.
    func useFIDO2Assertion(kid: String, signCount: UInt32, nonce: String, expiresAt: Date, now: Date) async throws
        -> FIDO2AssertionUse

    // MARK: Activation codes

    /// Stores the user's open activation code, replacing any earlier one.
    /// Throws ``StorageError/noSuchUser(_:)``.
    func putActivationCode(_ code: ActivationCodeRecord) async throws

    /// The user's open activation code, or nil.
    func activationCode(user: String) async throws -> ActivationCodeRecord?

    /// Issues a code for `code.user` against the name's hourly budget, atomically: at most
    /// `maxCodesPerHour` codes per name and hour (SPEC §5.1). Stores the code, replacing any
    /// earlier one, when the name is a user; for other names only the budget is counted.
    func issueActivationCode(_ code: ActivationCodeRecord, maxCodesPerHour: Int, now: Date) async throws -> ActivationIssue

    /// Takes one attempt from the name's activation-code budget before a code is checked:
    /// at most `maxAttempts` wrong codes per name in the budget's hour, whatever codes were
    /// issued meanwhile. ``AttemptReservation/denied(blockedUntil:)`` when none is left.
    func reserveActivationAttempt(name: String, maxAttempts: Int, now: Date) async throws -> AttemptReservation

    /// Uses up the user's open code if its hash is still `codeHash` and it has not expired
    /// at `now` (check-and-consume: of concurrent right answers exactly one gets true), and
    /// gives the name's wrong-code budget back.
    func consumeActivationCode(user: String, codeHash: String, now: Date) async throws -> Bool

    /// Deletes the user's open activation code. Returns false if there was none.
    @discardableResult
    func deleteActivationCode(user: String) async throws -> Bool
}
