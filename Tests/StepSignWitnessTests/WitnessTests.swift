import Foundation
import Logging
import StepSignCrypto
import StepSignFormat
import StepSignTestSupport
@testable import StepSignWitness
import Testing

/// The witness's rule (C2SP tlog-witness v1, SPEC §5.6), status by status, on a real state
/// directory: it cosigns only a checkpoint signed by a trusted key of its log that extends,
/// by a verified proof, the one it cosigned last; and it keeps that one across restarts.
@Suite struct WitnessTests {
    static let clock: @Sendable () -> UInt64 = { 1_700_000_000 }

    static func witness(_ directory: TemporaryDirectory, logs: [NoteVerifierKey]) throws -> Witness {
        try Witness(directory: try WitnessStateDirectory(path: directory.appending("state"), name: "witness.test/w1"),
                    logKeys: logs, now: clock, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    static func status(_ witness: Witness, _ request: AddCheckpointRequest) -> Int {
        switch witness.addCheckpoint(body: Array(request.body.utf8)) {
        case .success: 200
        case let .failure(refusal): refusal.status
        }
    }

    @Test func aFirstCheckpointIsCosignedAndTheCosignatureVerifies() throws {
        let directory = try TemporaryDirectory("witness")
        defer { directory.remove() }
        let log = try TestLog(size: 10)
        let witness = try Self.witness(directory, logs: [log.verifierKey])
        let request = try log.request(old: 0, new: 10)
        let lines = try witness.addCheckpoint(body: Array(request.body.utf8)).get()
        let cosignatures = try WitnessResponse.cosignatures(lines, of: request.checkpoint, witness: witness.verifierKey)
        #expect(cosignatures.count == 1)
        var cosigned = request.checkpoint
        cosigned.add(cosignatures[0])
        let found = cosigned.cosigners([witness.verifierKey])
        #expect(found.count == 1 && found.first?.timestamp == 1_700_000_000)
        #expect(witness.latest(origin: log.origin)?.size == 10)
    }

    @Test func theLogGrowsByConsistencyProofs() throws {
        let directory = try TemporaryDirectory("witness")
        defer { directory.remove() }
        let log = try TestLog(size: 300)
        let witness = try Self.witness(directory, logs: [log.verifierKey])
        var old: Int64 = 0
        for size: Int64 in [1, 2, 3, 4, 5, 8, 9, 16, 17, 100, 255, 256, 257, 300, 300] {
            #expect(Self.status(witness, try log.request(old: old, new: size)) == 200, "\(old) → \(size)")
            old = size
        }
    }

    @Test func anUnknownOriginIs404() throws {
        let directory = try TemporaryDirectory("witness")
        defer { directory.remove() }
        let witness = try Self.witness(directory, logs: [try TestLog(size: 1).verifierKey])
        #expect(Self.status(witness, try TestLog(origin: "other.example/log", size: 3).request(old: 0, new: 3)) == 404)
    }

    @Test func aCheckpointWithoutATrustedSignatureIs403() throws {
        let directory = try TemporaryDirectory("witness")
        defer { directory.remove() }
        let log = try TestLog(size: 5)
        let witness = try Self.witness(directory, logs: [log.verifierKey])
        // Signed by another key of the same name: an unknown key, ignored, so none verifies.
        var request = try log.request(old: 0, new: 5)
        request.checkpoint = try log.checkpoint(5, signedBy: try Ed25519PrivateKey.generate())
        #expect(Self.status(witness, request) == 403)
        // The trusted key's line over other text: it fails, and the note is refused.
        var forged = try log.request(old: 0, new: 5)
        let line = try #require(forged.checkpoint.signatures.first)
        forged.checkpoint = try SignedNote(text: try log.checkpoint(4).text, signatures: [line])
        #expect(Self.status(witness, forged) == 403)
        #expect(witness.latest(origin: log.origin) == nil)
    }

    @Test func anOldSizeAboveTheNewIs400() throws {
        let directory = try TemporaryDirectory("witness")
        defer { directory.remove() }
        let log = try TestLog(size: 9)
        let witness = try Self.witness(directory, logs: [log.verifierKey])
        #expect(Self.status(witness, try log.request(old: 0, new: 9)) == 200)
        let request = AddCheckpointRequest(oldSize: 9, proof: [], checkpoint: try log.checkpoint(5))
        #expect(Self.status(witness, request) == 400)
    }

    @Test func anOldSizeThatIsNotTheWitnesssIs409WithItsSize() throws {
        let directory = try TemporaryDirectory("witness")
        defer { directory.remove() }
        let log = try TestLog(size: 40)
        let witness = try Self.witness(directory, logs: [log.verifierKey])
        #expect(Self.status(witness, try log.request(old: 0, new: 17)) == 200)
        for old: Int64 in [0, 16, 18] {
            let result = witness.addCheckpoint(body: Array(try log.request(old: old, new: 40).body.utf8))
            guard case let .failure(refusal) = result else { Issue.record("\(old) was cosigned"); continue }
            #expect(refusal == .conflict(witnessSize: 17))
            #expect(refusal.contentType == "text/x.tlog.size")
            #expect(try WitnessResponse.conflictSize(refusal.body) == 17)
        }
        // An older checkpoint is never cosigned: old 17 → 10 is 400, old 10 → 10 is 409.
        #expect(Self.status(witness, AddCheckpointRequest(oldSize: 17, proof: [], checkpoint: try log.checkpoint(10))) == 400)
        #expect(Self.status(witness, try log.request(old: 10, new: 10)) == 409)
        #expect(witness.latest(origin: log.origin)?.size == 17)
    }

    @Test func theSameSizeWithAnotherRootIs409AndTheSameCheckpointIsCosignedAgain() throws {
        let directory = try TemporaryDirectory("witness")
        defer { directory.remove() }
        let log = try TestLog(size: 12)
        let rewritten = log.forked(at: 3, tag: "b")
        let witness = try Self.witness(directory, logs: [log.verifierKey])
        #expect(Self.status(witness, try log.request(old: 0, new: 12)) == 200)
        #expect(Self.status(witness, try rewritten.request(old: 12, new: 12)) == 409)
        #expect(Self.status(witness, try log.request(old: 12, new: 12)) == 200)
    }

    @Test func aProofThatDoesNotVerifyIs422() throws {
        let directory = try TemporaryDirectory("witness")
        defer { directory.remove() }
        let log = try TestLog(size: 64)
        let rewritten = log.forked(at: 5, tag: "b")
        let witness = try Self.witness(directory, logs: [log.verifierKey])
        #expect(Self.status(witness, try log.request(old: 0, new: 20)) == 200)
        // The rewritten log, signed by the stolen key, with its own (valid) proof from 20.
        #expect(Self.status(witness, try rewritten.request(old: 20, new: 64)) == 422)
        // A flipped proof hash, a cut proof, a proof when the old size is 0.
        var flipped = try log.request(old: 20, new: 64)
        flipped.proof[1][0] ^= 1
        #expect(Self.status(witness, flipped) == 422)
        var cut = try log.request(old: 20, new: 64)
        cut.proof.removeLast()
        #expect(Self.status(witness, cut) == 422)
        #expect(witness.latest(origin: log.origin)?.size == 20)
        #expect(Self.status(witness, try log.request(old: 20, new: 64)) == 200)
    }

    @Test func whatWasCosignedSurvivesARestartAndTheDirectoryIsLocked() throws {
        let directory = try TemporaryDirectory("witness")
        defer { directory.remove() }
        let log = try TestLog(size: 30)
        var verifierKey: NoteVerifierKey?
        do {
            let witness = try Self.witness(directory, logs: [log.verifierKey])
            verifierKey = witness.verifierKey
            #expect(Self.status(witness, try log.request(old: 0, new: 21)) == 200)
            #expect(throws: WitnessSetupError.self) {
                try WitnessStateDirectory(path: directory.appending("state"), name: nil)
            }
        }
        let restarted = try Self.witness(directory, logs: [log.verifierKey])
        #expect(restarted.verifierKey == verifierKey)
        #expect(restarted.latest(origin: log.origin)?.size == 21)
        #expect(Self.status(restarted, try log.request(old: 0, new: 30)) == 409)
        #expect(Self.status(restarted, try log.request(old: 21, new: 30)) == 200)
        // Another name for the same directory would change the key: refused.
        #expect(throws: WitnessSetupError.self) {
            try WitnessStateDirectory(path: directory.appending("state"), name: "witness.test/w2")
        }
    }

    @Test("""
        a stored checkpoint that cannot be read is a failed start, not a log never cosigned (which \
        would cosign a checkpoint that does not extend the last one)
        """)
    func anUnreadableRecordIsNotANewLog() throws {
        let directory = try TemporaryDirectory("witness")
        defer { directory.remove() }
        let log = try TestLog(size: 30)
        do {
            let witness = try Self.witness(directory, logs: [log.verifierKey])
            #expect(Self.status(witness, try log.request(old: 0, new: 21)) == 200)
        }
        // The record's directory replaced by a file: its check fails (ENOTDIR), as an EIO would.
        let logs = directory.appending("state/logs")
        try FileManager.default.removeItem(atPath: logs)
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: logs))
        #expect(throws: WitnessSetupError.self) { try Self.witness(directory, logs: [log.verifierKey]) }
    }

    @Test func aCosignatureKeyIsNotALogKey() throws {
        let directory = try TemporaryDirectory("witness")
        defer { directory.remove() }
        let key = try Ed25519PrivateKey.generate()
        #expect(throws: WitnessSetupError.self) {
            try Self.witness(directory, logs: [try NoteVerifierKey(name: "x.example/log", ed25519: key.publicKey, type: .cosignatureV1)])
        }
        #expect(throws: WitnessSetupError.self) { try Self.witness(directory, logs: []) }
    }
}
