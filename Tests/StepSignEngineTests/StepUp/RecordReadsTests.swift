import Foundation
import Synchronization
@testable import StepSignEngine
import StepSignEngineTestSupport
import StepSignStorage
import Testing

/// One step-up answer reads the user's record once (issue 23): the password check reads it
/// after reserving the attempt, and the flow goes on with that record (its expiry, its
/// credential token) instead of asking the store again, which on PostgreSQL is a round trip
/// each.
@Suite("Record reads per answer")
final class RecordReadsTests: Sendable {
    let directory: String
    let engine: Engine

    init() async throws {
        (engine, directory) = try await makeTestEngine("engine-record-reads")
        try await addTestUser(engine)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    static let peer = Peer(uid: 1000, gid: 1000, pid: 42, comm: "tester", groups: [])
    let signing = SigningRequest(user: "alice", payload: "p", payloadLength: 1, reason: "r", authLevel: 1, authenticatorType: 0)

    /// The step-up's dependencies over the engine's real store, counting record reads.
    func dependencies(_ counting: CountingCredentials) throws -> StepUpDependencies {
        let passwords = try PasswordAuthenticator(store: counting, parameters: engine.config.password.scryptParameters,
                                                  checks: CheckScheduler(), logger: engine.logger)
        return StepUpDependencies(passwords: passwords, users: counting, singleUse: counting,
                                  deviceKeys: DeviceKeys(store: counting, logger: engine.logger),
                                  idvVerifier: engine.credentials.idvVerifier, logger: engine.logger)
    }

    var context: RequestContext { RequestContext(settings: engine.settings, now: Date(), peer: Self.peer) }

    @Test("a right password: one read, and the answer signs")
    func rightPassword() async throws {
        let counting = CountingCredentials(engine.credentials.store)
        let outcome = try await PasswordStepUp().check(.password(testUserPassword), for: signing.subject,
                                                       using: try dependencies(counting), context: context)
        #expect(outcome == .accepted)
        #expect(counting.userReads == 1)
    }

    @Test("a right password that must be replaced: still one read, and 118 instead of a signature")
    func passwordToReplace() async throws {
        _ = try await engine.credentials.store.expirePassword(named: "alice")
        let counting = CountingCredentials(engine.credentials.store)
        let outcome = try await PasswordStepUp().check(.password(testUserPassword), for: signing.subject,
                                                       using: try dependencies(counting), context: context)
        #expect(outcome == .passwordMustBeReplaced)
        #expect(counting.userReads == 1)
    }

    @Test("a wrong password: one read, one attempt gone")
    func wrongPassword() async throws {
        let counting = CountingCredentials(engine.credentials.store)
        let outcome = try await PasswordStepUp().check(.password("not-the-password"), for: signing.subject,
                                                       using: try dependencies(counting), context: context)
        #expect(outcome == .rejected(attemptsLeft: engine.config.password.maxAttempts - 1))
        #expect(counting.userReads == 1)
    }
}

/// A real store's credentials and counters, counting how often a user's record is read.
final class CountingCredentials: CredentialStore, CounterStore {
    private let store: any CredentialStore & CounterStore
    private let reads = Mutex(0)

    init(_ store: any CredentialStore & CounterStore) {
        self.store = store
    }

    var userReads: Int { reads.withLock { $0 } }

    var isShared: Bool { store.isShared }

    func user(named name: String) async throws -> UserRecord? {
        reads.withLock { $0 += 1 }
        return try await store.user(named: name)
    }

    func addUser(_ new: NewUser) async throws { try await store.addUser(new) }
    func removeUser(named name: String) async throws -> Bool { try await store.removeUser(named: name) }
    func listUsers() async throws -> [UserRecord] { try await store.listUsers() }
    func unlockUser(named name: String) async throws -> Bool { try await store.unlockUser(named: name) }
    func expirePassword(named name: String) async throws -> Bool { try await store.expirePassword(named: name) }
    func setPassword(user: String, hash: String, at: Date, historyLimit: Int) async throws -> CredentialToken {
        try await store.setPassword(user: user, hash: hash, at: at, historyLimit: historyLimit)
    }
    func rehashPassword(user: String, expected: String, replacement: String) async throws -> Bool {
        try await store.rehashPassword(user: user, expected: expected, replacement: replacement)
    }
    func passwordHistory(user: String, limit: Int) async throws -> [String] { try await store.passwordHistory(user: user, limit: limit) }
    func addDeviceKey(_ key: DeviceKeyRecord) async throws { try await store.addDeviceKey(key) }
    func deviceKeys(user: String, includeRevoked: Bool) async throws -> [DeviceKeyRecord] {
        try await store.deviceKeys(user: user, includeRevoked: includeRevoked)
    }
    func revokeDeviceKey(user: String, kid: String, at: Date) async throws -> Bool { try await store.revokeDeviceKey(user: user, kid: kid, at: at) }
    func addFIDO2DeviceKey(_ key: DeviceKeyRecord, credentialID: String) async throws {
        try await store.addFIDO2DeviceKey(key, credentialID: credentialID)
    }
    func fido2Credential(kid: String) async throws -> FIDO2Credential? { try await store.fido2Credential(kid: kid) }
    func useFIDO2Assertion(kid: String, signCount: UInt32, nonce: String, expiresAt: Date, now: Date) async throws
        -> FIDO2AssertionUse
    {
        try await store.useFIDO2Assertion(kid: kid, signCount: signCount, nonce: nonce, expiresAt: expiresAt, now: now)
    }
    func putActivationCode(_ code: ActivationCodeRecord) async throws { try await store.putActivationCode(code) }
    func activationCode(user: String) async throws -> ActivationCodeRecord? { try await store.activationCode(user: user) }
    func issueActivationCode(_ code: ActivationCodeRecord, maxCodesPerHour: Int, now: Date) async throws -> ActivationIssue {
        try await store.issueActivationCode(code, maxCodesPerHour: maxCodesPerHour, now: now)
    }
    func reserveActivationAttempt(name: String, maxAttempts: Int, now: Date) async throws -> AttemptReservation {
        try await store.reserveActivationAttempt(name: name, maxAttempts: maxAttempts, now: now)
    }
    func consumeActivationCode(user: String, codeHash: String, now: Date) async throws -> Bool {
        try await store.consumeActivationCode(user: user, codeHash: codeHash, now: now)
    }
    func deleteActivationCode(user: String) async throws -> Bool { try await store.deleteActivationCode(user: user) }
    func attemptCounter(name: String, now: Date) async throws -> AttemptCounter { try await store.attemptCounter(name: name, now: now) }
    func reserveAttempt(_ id: ReservationID, name: String, maxAttempts: Int, blockSeconds: Int, now: Date) async throws
        -> AttemptReservation {
        try await store.reserveAttempt(id, name: name, maxAttempts: maxAttempts, blockSeconds: blockSeconds, now: now)
    }
    func giveBackAttempt(_ id: ReservationID, name: String, now: Date) async throws {
        try await store.giveBackAttempt(id, name: name, now: now)
    }
    func spendAttempt(_ id: ReservationID, name: String, maxAttempts: Int, blockSeconds: Int, now: Date) async throws
        -> SpentAttempt {
        try await store.spendAttempt(id, name: name, maxAttempts: maxAttempts, blockSeconds: blockSeconds, now: now)
    }
    func useOnce(_ value: String, expiresAt: Date, now: Date) async throws -> Bool {
        try await store.useOnce(value, expiresAt: expiresAt, now: now)
    }
}
