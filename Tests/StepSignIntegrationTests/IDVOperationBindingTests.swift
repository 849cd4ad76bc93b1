import Foundation
import StepSignClient
import StepSignCrypto
import StepSignFormat
import Testing

/// The IDV assertion is bound to the operation, not only to a random nonce (SPEC §3.1/§3.2,
/// PSD2 "dynamic linking"): `getIDVBiometric` carries the operation text, the IDV server shows
/// it and puts `txn` = base64url(SHA-256(text)) in its assertion, and the daemon accepts the
/// assertion only for the operation whose text hashes to that `txn`.
@Suite("IDV biometric (4,1): bound to the operation", .blocking)
struct IDVOperationBindingTests {
    static let payload = "wire 5000 EUR to carol"
    static let reason = "high-value transfer"

    private func startDaemon(_ idv: TestIDVServer) throws -> DaemonHarness {
        let daemon = try DaemonHarness(config: idv.config(), start: false)
        try daemon.start()
        try daemon.addUser()
        return daemon
    }

    @Test("getIDVBiometric carries challenge: stepsign-idv-v1, nonce, user, payload SHA-256, reason, requester name, pid and uid")
    func challengeText() throws {
        let idv = try TestIDVServer()
        let daemon = try startDaemon(idv)
        let reply = try daemon.connect().requestIDV(payload: Self.payload, reason: Self.reason)
        let challenge = try #require(reply.idvChallenge, "\(reply.shape)")
        let operation = try #require(IDVOperation(text: challenge.text), "\(String(decoding: challenge.text, as: UTF8.self))")
        #expect(operation == IDVOperation.ofThisProcess(nonce: challenge.nonce, payload: Self.payload, reason: Self.reason))
        #expect(operation.nonce == reply.idvNonce)
        // The test IDV server shows exactly that to the person before it asserts anything.
        _ = try idv.assertion(for: challenge)
        #expect(idv.shown.withLock { $0 } == [operation])
    }

    /// What an attacker changed between the operation the person was shown and the one the
    /// assertion is used for.
    enum Change: String, CaseIterable, CustomStringConvertible, Sendable {
        case payload = "another payload"
        case reason = "another reason"
        case requesterName = "another requesting process name"
        case requesterPID = "another requesting pid"
        case requesterUID = "another requesting uid"
        case user = "another user line"
        var description: String { rawValue }
    }

    @Test("an assertion whose txn is for another operation is refused with 102; the right one then signs", arguments: Change.allCases)
    func otherOperationRefused(_ change: Change) throws {
        let idv = try TestIDVServer()
        let daemon = try startDaemon(idv)
        let connection = try daemon.connect()
        let reply = try connection.requestIDV(payload: Self.payload, reason: Self.reason)
        let nonce = try #require(reply.idvNonce)
        // Built here rather than taken from the reply, so the test also runs against a daemon
        // that sends no challenge: the operation the person was shown, changed by the attacker.
        var shown = IDVOperation.ofThisProcess(nonce: nonce, payload: Self.payload, reason: Self.reason)
        switch change {
        case .payload: shown = IDVOperation.ofThisProcess(nonce: nonce, payload: "wire 50 EUR to carol", reason: Self.reason)
        case .reason: shown = IDVOperation.ofThisProcess(nonce: nonce, payload: Self.payload, reason: "monthly rent")
        case .requesterName: shown.comm = "banking-app"
        case .requesterPID: shown.pid += 1
        case .requesterUID: shown.uid += 1000
        case .user: shown.user = "alice2"
        }
        var claims = TestIDVServer.goodClaims(user: DaemonHarness.user, nonce: nonce)
        claims["txn"] = IDVOperation.txn(of: shown.text)
        let refused = try connection.setIDVAssertion(try idv.assertion(claims: claims))
        #expect(refused.code == 0, "\(refused.message)")
        #expect(refused.eventNames == ["getIDVBiometric"], "\(refused.shape)")
        #expect(refused.statusCode(of: "getIDVBiometric") == 102, "\(refused.shape)")
        #expect(refused.int("attemptsLeft", of: "getIDVBiometric") == 2)
        #expect(try connection.call("status").result?["signatures"]?.int == 0)
        // The assertion for the operation as it is signs it.
        let fresh = try #require(refused.idvChallenge)
        let signed = try connection.setIDVAssertion(try idv.assertion(for: fresh))
        #expect(signed.statusCode(of: "onAuthenticateUserAndSignData") == 100, "\(signed.shape)")
        let details = try #require(signed.signingDetails)
        let claimsSigned = try StepSignSignature.verify(try #require(details["payloadSignature"]?.stringValue),
                                                        trustedKeys: try connection.trustedKeys())
        #expect(claimsSigned.payload == Self.payload)
        #expect(claimsSigned.reason == Self.reason)
    }

    @Test("the right operation's txn, with the txn of another session's operation for the same user, is refused")
    func txnOfAnotherSession() throws {
        let idv = try TestIDVServer()
        let daemon = try startDaemon(idv)
        let victim = try daemon.connect()
        let attacker = try daemon.connect()
        // The person approves "wire 50 EUR" on their own connection ...
        let benign = try #require(try victim.requestIDV(payload: "wire 50 EUR to carol", reason: Self.reason).idvChallenge)
        // ... while the attacker's connection asks for another payload; the attacker sends the
        // IDV server the benign text with the attacker's nonce in it.
        let attack = try attacker.requestIDV(payload: "wire 50000 EUR to mallory", reason: Self.reason)
        let attackNonce = try #require(attack.idvNonce)
        var forged = try #require(IDVOperation(text: benign.text))
        forged.nonce = attackNonce
        let assertion = try idv.assertion(for: IDVChallenge(nonce: attackNonce, text: forged.text))
        let reply = try attacker.setIDVAssertion(assertion)
        #expect(reply.statusCode(of: "getIDVBiometric") == 102, "\(reply.shape)")
        #expect(try attacker.call("status").result?["signatures"]?.int == 0)
    }
}
