import NIOPosix
import StepSignClient
import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import Synchronization

/// The pusher's connection to `stepsignd` (an admin peer, SPEC §5.6): the checkpoint and
/// consistency proofs it submits, and the cosignatures it stores. The client is blocking, so
/// calls run one at a time on a thread of their own, never on the tasks that talk HTTP; a
/// connection that failed is dropped and the next call connects again.
final class DaemonLink: Sendable {
    /// A refusal from the daemon (its code and message).
    struct Refused: Error, CustomStringConvertible {
        var code: Int
        var message: String
        var description: String { "stepsignd refused (\(code)): \(message)" }
    }

    private let socketPath: String
    private let connection = Mutex<StepSignConnection?>(nil)
    private let thread = NIOThreadPool(numberOfThreads: 1)

    init(socketPath: String) {
        self.socketPath = socketPath
        thread.start()
    }

    deinit { thread.shutdownGracefully { _ in } }

    /// A consistency proof from `fromSize` and the signed checkpoint it ends at (of `toSize`,
    /// or of the whole log), with the cosignatures the daemon stored for it.
    func consistencyProof(from fromSize: Int64, to toSize: Int64?) async throws -> (proof: [[UInt8]], checkpoint: SignedNote) {
        var parameters: [(String, JSONValue)] = [("fromSize", .int(fromSize))]
        if let toSize { parameters.append(("toSize", .int(toSize))) }
        let result = try await call("getConsistencyProof", parameters)
        guard let hashes = result["hashes"]?.arrayValue, let text = result["checkpoint"]?.stringValue else {
            throw Refused(code: -1, message: "getConsistencyProof's reply has no hashes and checkpoint")
        }
        var proof: [[UInt8]] = []
        for hash in hashes {
            guard let text = hash.stringValue, let bytes = Base64.decode(text), bytes.count == MerkleHash.size else {
                throw Refused(code: -1, message: "getConsistencyProof's reply has a hash that is not base64 of 32 bytes")
            }
            proof.append(bytes)
        }
        return (proof, try SignedNote(parsing: text))
    }

    /// Stores `lines` (cosignatures of the checkpoint of `treeSize`); the daemon checks each.
    func addCosignatures(treeSize: Int64, lines: [String]) async throws {
        _ = try await call("admin.addCosignatures", [
            ("treeSize", .int(treeSize)), ("cosignatures", .array(lines.map { .string($0) })),
        ])
    }

    /// Waits up to `seconds` (at most 5, so that a shutdown waits for no longer) for a `waitForProof` to
    /// ask for a round (SPEC §5.6): true when one did.
    func awaitCheckpointRequest(seconds: Int) async throws -> Bool {
        let result = try await call("admin.awaitCheckpointRequest", [("waitSeconds", .int(Int64(min(seconds, 5))))], timeout: 30)
        return result["requested"]?.boolValue ?? false
    }

    private func call(_ op: String, _ parameters: [(String, JSONValue)], timeout: Int = 30) async throws -> JSONValue {
        let socketPath = self.socketPath
        return try await thread.runIfActive {
            try self.connection.withLock { (open: inout StepSignConnection?) throws -> JSONValue in
                do {
                    let link = try open ?? StepSignConnection(socketPath: socketPath)
                    open = link
                    let reply = try link.call(op, parameters, timeout: Double(timeout))
                    guard reply.code == 0 else { throw Refused(code: reply.code, message: reply.message) }
                    return reply.result ?? .null
                } catch let refused as Refused {
                    throw refused
                } catch {
                    open = nil
                    throw error
                }
            }
        }
    }
}
