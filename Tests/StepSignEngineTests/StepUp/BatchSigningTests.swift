import Foundation
@testable import StepSignEngine
import StepSignConfig
import StepSignCrypto
import StepSignEngineTestSupport
import StepSignFormat
import StepSignProtocol
import Testing

/// Batch signing (SPEC §3.4), attacked: one step-up for up to `signing.max_batch_items`
/// payloads, whose challenge shows the manifest and whose device text (`stepsign-lda-v3`)
/// binds its count and root; every item its own signature, JWS and ledger entry, all or none;
/// a failed step-up costs one attempt; a device signature over another batch does not answer.
@Suite("Batch signing")
final class BatchSigningTests: Sendable {
    let directory: String
    let engine: Engine
    static let peer = Peer(uid: 1000, gid: 1000, pid: 42, comm: "release", groups: [])

    init() async throws {
        (engine, directory) = try await makeTestEngine("engine-batch") { $0.signing.maxBatchItems = 20 }
        try await addTestUser(engine)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    struct Failure: Error, CustomStringConvertible { var description: String; init(_ d: String) { description = d } }

    func send(_ text: String, _ session: inout Session) async -> Reply {
        await engine.handle(line: Array(text.utf8), session: &session)
    }

    static func items(_ payloads: [String], reason: (Int) -> String = { _ in "release 1.2" }) -> String {
        payloads.enumerated().map { #"{"payload":"\#($0.element)","reason":"\#(reason($0.offset))"}"# }.joined(separator: ",")
    }

    static func request(_ payloads: [String], level: Int = 1, type: Int = 0, reason: (Int) -> String = { _ in "release 1.2" }) -> String {
        #"{"id":1,"op":"authenticateUserAndSignBatch","user":"alice","items":[\#(items(payloads, reason: reason))],"authLevel":\#(level),"authenticatorType":\#(type)}"#
    }

    static let answer = #"{"id":2,"op":"setPassword","password":"\#(testUserPassword)","challengeMode":12}"#

    /// RFC 9162's MTH over SHA-256 of each payload, written out recursively here (not with the
    /// frontier the daemon uses).
    static func expectedRoot(_ payloads: [String]) -> String {
        func mth(_ leaves: ArraySlice<[UInt8]>) -> [UInt8] {
            if leaves.count == 1 { return SHA256.hash([0x00] + leaves.first!) }
            var k = 1
            while k << 1 < leaves.count { k <<= 1 }
            let start = leaves.startIndex
            return SHA256.hash([0x01] + mth(leaves[start..<start + k]) + mth(leaves[(start + k)...]))
        }
        return Base64.encode(mth(ArraySlice(payloads.map { SHA256.hash(Array($0.utf8)) })))
    }

    func batchOutcome(_ reply: Reply) throws -> (BatchSignatures, Status) {
        guard case let .onAuthenticateUserAndSignBatch(batch, status)? = reply.events.first else {
            throw Failure("no batch outcome: \(reply.line)")
        }
        return (batch, status)
    }

    @Test("one password step-up signs every item: its own ID, JWS with the batch claim, ledger entry, in order")
    func passwordBatch() async throws {
        let payloads = (0..<7).map { "artifact-\($0).tar.gz sha256:\(String(repeating: "ab", count: 8))" }
        var session = Session(peer: Self.peer)
        let before = try await engine.signing.store.ledgerSignatureCount()
        let challenge = await send(Self.request(payloads, reason: { $0 < 4 ? "release 1.2" : "hotfix" }), &session)
        guard case let .getPassword(user, mode, _, status, _, manifest)? = challenge.events.first, let manifest else {
            throw Failure("no getPassword with a manifest: \(challenge.line)")
        }
        #expect(user == "alice" && mode == .stepUpForSigning && status == .success)
        #expect(manifest == BatchManifest(count: 7, bytes: payloads.reduce(0) { $0 + $1.utf8.count },
                                          root: Self.expectedRoot(payloads), reasons: ["release 1.2", "hotfix"]))
        #expect(try await engine.signing.store.ledgerSignatureCount() == before, "nothing signed before the step-up")

        let (batch, outcome) = try batchOutcome(await send(Self.answer, &session))
        #expect(outcome == .success && batch.manifest == manifest && batch.signatures.count == 7)
        #expect(Set(batch.signatures.map(\.dataSignatureID)).count == 7 && !batch.batchID.isEmpty)
        var seqs: [Int64] = []
        for (index, details) in batch.signatures.enumerated() {
            let claims = try StepSignSignature.verify(details.payloadSignature, trustedKeys: engine.signing.keyring.trustedKeys)
            #expect(claims.payload == payloads[index] && claims.jti == details.dataSignatureID)
            #expect(claims.reason == (index < 4 ? "release 1.2" : "hotfix"))
            #expect(claims.authLevel == 1 && claims.authenticatorUsed == "password" && claims.stepUp == nil)
            #expect(claims.batch == BatchClaim(id: batch.batchID, index: index, count: 7, root: manifest.root))
            let entry = try #require(try await engine.signing.store.ledgerEntry(signatureID: details.dataSignatureID))
            #expect(entry.jws == details.payloadSignature && details.logIndex == entry.seq - 1)
            seqs.append(entry.seq)
        }
        #expect(seqs == Array(seqs[0]..<seqs[0] + 7), "the batch's entries are consecutive, in order")
        #expect(try await engine.signing.store.ledgerSignatureCount() == before + 7)
    }

    @Test("a wrong password costs one attempt for the whole batch; the last one ends it with 153 and nothing signed")
    func failedStepUpCostsOneAttempt() async throws {
        var session = Session(peer: Self.peer)
        let before = try await engine.signing.store.ledgerSignatureCount()
        _ = await send(Self.request(["a", "b", "c", "d", "e"]), &session)
        let maxAttempts = engine.config.password.maxAttempts
        for expected in stride(from: maxAttempts - 1, through: 1, by: -1) {
            let wrong = await send(#"{"id":2,"op":"setPassword","password":"wrong","challengeMode":12}"#, &session)
            guard case let .getPassword(_, _, attemptsLeft, status, _, manifest)? = wrong.events.first else {
                throw Failure("no retry: \(wrong.line)")
            }
            #expect(attemptsLeft == expected && status.code == .authenticationFailed && manifest?.count == 5)
        }
        let last = await send(#"{"id":3,"op":"setPassword","password":"wrong","challengeMode":12}"#, &session)
        let (batch, status) = try batchOutcome(last)
        #expect(status.code == .attemptsExhausted && batch.signatures.isEmpty && batch.batchID.isEmpty)
        #expect(try await engine.signing.store.ledgerSignatureCount() == before)
    }

    @Test("max_batch_items + 1 items, an item over the payload limit, a blank reason, no items: error 4, nothing signed")
    func limits() async throws {
        var session = Session(peer: Self.peer)
        let before = try await engine.signing.store.ledgerSignatureCount()
        let tooMany = await send(Self.request((0...20).map { "p\($0)" }), &session)
        #expect(tooMany.error?.code == .invalidArguments && tooMany.error?.message.contains("at most 20") == true)
        let long = await send(Self.request(["ok", String(repeating: "x", count: 501)]), &session)
        #expect(long.error?.code == .invalidArguments && long.error?.message.hasPrefix("items[1]") == true)
        let blank = await send(Self.request(["ok", "ok"], reason: { $0 == 1 ? "  " : "r" }), &session)
        #expect(blank.error?.code == .invalidArguments && blank.error?.message.hasPrefix("items[1]") == true)
        for bad in [
            #"{"id":1,"op":"authenticateUserAndSignBatch","user":"alice","items":[],"authLevel":1,"authenticatorType":0}"#,
            #"{"id":1,"op":"authenticateUserAndSignBatch","user":"alice","items":[{"payload":"p"}],"authLevel":1,"authenticatorType":0}"#,
            #"{"id":1,"op":"authenticateUserAndSignBatch","user":"alice","items":[{"payload":"p","reason":"r","x":1}],"authLevel":1,"authenticatorType":0}"#,
            #"{"id":1,"op":"authenticateUserAndSignBatch","user":"alice","items":"p","authLevel":1,"authenticatorType":0}"#,
            #"{"id":1,"op":"authenticateUserAndSignBatch","user":"alice","items":[{"payload":1,"reason":"r"}],"authLevel":1,"authenticatorType":0}"#,
        ] {
            let reply = await send(bad, &session)
            #expect(reply.error?.code == .invalidArguments, "\(bad) → \(reply.line)")
        }
        #expect(session.pending == nil, "no challenge was opened")
        #expect(try await engine.signing.store.ledgerSignatureCount() == before)
    }

    @Test("level 0 signs the batch without a challenge when allowed, else 170; level 2 is 214")
    func levelZero() async throws {
        var session = Session(peer: Self.peer)
        let refused = await send(Self.request(["a"], level: 0), &session)
        #expect(refused.error?.code == .notSupported)
        let unsupported = await send(Self.request(["a"], level: 2), &session)
        #expect(unsupported.error?.code == .unsupportedAuthCombination)

        let (open, directory) = try await makeTestEngine("engine-batch-0") { $0.signing.allowLevel0 = true }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await addTestUser(open)
        var other = Session(peer: Self.peer)
        let reply = await open.handle(line: Array(Self.request(["a", "b"], level: 0).utf8), session: &other)
        let (batch, status) = try batchOutcome(reply)
        #expect(status == .success && batch.signatures.map(\.authenticatorUsed) == ["none", "none"])
        #expect(try await open.signing.store.ledgerSignatureCount() == 2)
    }

    @Test("the device signs stepsign-lda-v3 over the manifest; its signature over another batch's text is rejected")
    func deviceKeyBindsTheManifest() async throws {
        let device = try P256PrivateKey.generate()
        var admin = Session(peer: testAdminPeer, isAdmin: true)
        let pem = device.publicKey.spkiPEM.replacingOccurrences(of: "\n", with: "\\n")
        let enrolled = await send(#"{"id":2,"op":"admin.enrollDeviceKey","user":"alice","publicKey":"\#(pem)"}"#, &admin)
        #expect(enrolled.error == nil, "\(enrolled.line)")
        let kid = device.publicKey.thumbprint

        // Another session's batch: a text the device would sign for a different manifest.
        var other = Session(peer: Self.peer)
        let decoy = await send(Self.request(["innocent"]), &other)
        guard case let .getLDASignature(_, _, decoyText, _, _, _, _)? = decoy.events.first else { throw Failure("\(decoy.line)") }

        let payloads = ["one", "two", "three"]
        var session = Session(peer: Self.peer)
        let challenge = await send(Self.request(payloads), &session)
        guard case let .getLDASignature(_, mode, text, keys, _, _, manifest)? = challenge.events.first,
              let bytes = Base64URL.decode(text) else { throw Failure("no getLDASignature: \(challenge.line)") }
        #expect(mode == .stepUpForSigning && keys == [kid] && manifest?.count == 3)
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 10)
        #expect(lines[0] == "stepsign-lda-v3" && lines[2] == "alice" && lines[3] == "3" && lines[4] == "11")
        #expect(lines[5] == Self.expectedRoot(payloads) && lines[6] == "release" && lines[7] == "42" && lines[8] == "1000")
        #expect(lines[9] == "release 1.2")

        let misdirected = Base64URL.encode(try device.signatureES256(for: try #require(Base64URL.decode(decoyText))))
        let refused = await send(#"{"id":3,"op":"setLDASignature","deviceKeyId":"\#(kid)","signature":"\#(misdirected)"}"#, &session)
        guard case let .getLDASignature(_, _, fresh, _, attemptsLeft, status, _)? = refused.events.first else {
            throw Failure("no retry: \(refused.line)")
        }
        #expect(status.code == .authenticationFailed && attemptsLeft == engine.config.password.maxAttempts - 1)
        let right = Base64URL.encode(try device.signatureES256(for: try #require(Base64URL.decode(fresh))))
        let (batch, outcome) = try batchOutcome(
            await send(#"{"id":4,"op":"setLDASignature","deviceKeyId":"\#(kid)","signature":"\#(right)"}"#, &session))
        #expect(outcome == .success && batch.signatures.map(\.dataPayload) == payloads)
        #expect(batch.signatures.allSatisfy { $0.authenticatorUsed == "lda" })
    }

    @Test("a batch neither uses nor opens a step-up reuse window")
    func noReuse() async throws {
        let (reusing, directory) = try await makeTestEngine("engine-batch-reuse") {
            $0.stepUp = .init(reuseSeconds: 300, reuseMaxUses: 5, reuseScope: .session, reuseLevels: [1])
        }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await addTestUser(reusing)
        var session = Session(peer: Self.peer)
        func send(_ text: String) async -> Reply { await reusing.handle(line: Array(text.utf8), session: &session) }
        func text(_ reply: Reply) -> String { String(decoding: reply.line, as: UTF8.self) }
        func single(_ id: Int, _ payload: String) -> String {
            #"{"id":\#(id),"op":"authenticateUserAndSignData","user":"alice","payload":"\#(payload)","reason":"r","authLevel":1,"authenticatorType":0}"#
        }

        // A batch stepped up with the password signs, and opens no window.
        guard case .getPassword? = await send(Self.request(["a", "b"])).events.first else { throw Failure("the batch asked for no password") }
        let (signedBatch, batchStatus) = try batchOutcome(await send(Self.answer))
        #expect(batchStatus == .success && signedBatch.signatures.map(\.dataPayload) == ["a", "b"])
        let after = await send(single(3, "p"))
        guard case .getPassword? = after.events.first else { throw Failure("a batch opened a window: \(text(after))") }

        // A single signing stepped up signs and opens the window ...
        let opened = await send(Self.answer)
        guard case let .onAuthenticateUserAndSignData(window, status)? = opened.events.first, status.code == .success,
              window.reusedFrom == nil
        else { throw Failure("the single signing's step-up did not sign: \(text(opened))") }
        // ... which a batch does not use ...
        let batch = await send(Self.request(["c"]))
        guard case .getPassword? = batch.events.first else { throw Failure("a batch used a window: \(text(batch))") }
        #expect(await send(#"{"id":4,"op":"resetAuthenticateUserAndSignDataState"}"#).error == nil)
        // ... though it is open: the next single signing uses it.
        let reused = await send(single(5, "q"))
        guard case let .onAuthenticateUserAndSignData(details, reusedStatus)? = reused.events.first, reusedStatus.code == .success
        else { throw Failure("no window was open: \(text(reused))") }
        #expect(details.reusedFrom == window.dataSignatureID)
    }

    @Test("a batch while a challenge is open is 213; resetAuthenticateUserAndSignDataState cancels a batch's")
    func oneAuthenticationAtATime() async throws {
        var session = Session(peer: Self.peer)
        _ = await send(Self.request(["a"]), &session)
        let second = await send(Self.request(["b"]), &session)
        #expect(second.error?.code == .authenticationInProgress)
        let reset = await send(#"{"id":5,"op":"resetAuthenticateUserAndSignDataState"}"#, &session)
        #expect(reset.error == nil && session.pending == nil)
        let late = await send(Self.answer, &session)
        #expect(late.error?.code == .wrongState)
    }
}
