import Foundation
import StepSignClient
import StepSignCrypto
import StepSignFormat
import StepSignProtocol

/// The C2SP tlog-proof files `stepsign proof` and `stepsign sign --proof-out` write (SPEC §5.5).
enum ProofFile {
    /// Asks the daemon for the inclusion proof of `signatureID` (in the tree of `treeSize`
    /// entries, else the whole log) and reads it into a tlog-proof.
    static func fetch(_ signatureID: String, treeSize: Int64? = nil, on connection: StepSignConnection) throws -> TlogProof {
        var parameters: [(String, JSONValue)] = [("signatureID", .string(signatureID))]
        if let treeSize { parameters.append(("treeSize", .int(treeSize))) }
        let reply = try connection.call("getInclusionProof", parameters).requireAccepted("getInclusionProof")
        guard let result = reply.result, let index = result["logIndex"]?.intValue,
              let hashes = result["hashes"]?.arrayValue, let note = result["checkpoint"]?.stringValue
        else { throw CLIError("the daemon's inclusion proof lacks logIndex, hashes or checkpoint") }
        do {
            let path = try hashes.map { value in
                guard let text = value.stringValue, let hash = Base64.decode(text) else {
                    throw NoteError.malformed("a hash is not base64")
                }
                return hash
            }
            return try TlogProof(index: index, hashes: path, checkpoint: try SignedNote(parsing: note))
        } catch {
            throw CLIError("the daemon's inclusion proof is not well-formed: \(error)")
        }
    }

    /// Asks the daemon for the tlog-proof of `signatureID` against a checkpoint `quorum` of its
    /// witnesses (nil: all) cosigned, waiting up to `timeoutSeconds` (`waitForProof`, SPEC §5.6).
    static func fetchWitnessed(_ signatureID: String, quorum: Int?, timeoutSeconds: Int,
                               on connection: StepSignConnection) throws -> TlogProof {
        var parameters: [(String, JSONValue)] = [("signatureID", .string(signatureID)), ("timeoutSeconds", .int(Int64(timeoutSeconds)))]
        if let quorum { parameters.append(("quorum", .int(Int64(quorum)))) }
        let reply = try connection.call("waitForProof", parameters, timeout: Double(timeoutSeconds + 30))
        guard reply.code == 0 else {
            throw CLIError("signed (\(signatureID)), but no witnessed proof: error \(reply.code): \(reply.message)")
        }
        guard let text = reply.result?["proof"]?.stringValue else { throw CLIError("the daemon's waitForProof reply lacks its proof") }
        do {
            return try TlogProof(parsing: text)
        } catch {
            throw CLIError("the daemon's witnessed proof is not well-formed: \(error)")
        }
    }

    /// The daemon's published log keys (`getPublicKeys.logKeys`).
    static func logKeys(on connection: StepSignConnection) throws -> [NoteVerifierKey] {
        let reply = try connection.call("getPublicKeys").requireAccepted("getPublicKeys")
        return (reply.result?["logKeys"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap { try? NoteVerifierKey($0) } }
    }

    /// Writes `proof` to `path` (stdout for "-"): a new file, or one replaced whole.
    static func write(_ proof: TlogProof, to path: String) throws {
        let data = Data(proof.serialized.utf8)
        if path == "-" {
            FileHandle.standardOutput.write(data)
            return
        }
        do {
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw CLIError("cannot write the proof to \(path): \(error.localizedDescription)")
        }
    }
}
