import StepSignCrypto
import StepSignFormat

/// The body of C2SP tlog-witness v1's `POST <prefix>/add-checkpoint`: the size of the
/// checkpoint the client believes the witness last cosigned (`old N`), a consistency proof from
/// that size (one base64 hash a line, at most 63), a blank line, and the new checkpoint.
///
///     old 20852014
///     PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=
///
///     example.com/behind-the-sofa
///     20852163
///     CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=
///
///     — example.com/behind-the-sofa Az3grlgtzPICa5OS8npV…
public struct AddCheckpointRequest: Sendable, Equatable {
    /// The most proof lines a client may send (C2SP tlog-witness).
    public static let maxProofLines = 63
    /// The largest body accepted: the old size line, 63 proof lines and the largest note.
    public static let maxBodySize = 32 + maxProofLines * 45 + SignedNote.maxSize

    /// The tree size the client says the witness last cosigned (0: never).
    public var oldSize: Int64
    /// The consistency proof from `oldSize` to the checkpoint's size (RFC 6962 §2.1.2).
    public var proof: [[UInt8]]
    /// The submitted checkpoint, signed by the log (perhaps by several keys).
    public var checkpoint: SignedNote

    public init(oldSize: Int64, proof: [[UInt8]], checkpoint: SignedNote) {
        self.oldSize = oldSize
        self.proof = proof
        self.checkpoint = checkpoint
    }

    /// Reads a request body, strictly: every line ends in a newline, the size is a decimal
    /// without leading zeroes, each proof line is base64 of 32 bytes.
    public init(body: some Collection<UInt8>) throws(WitnessRefusal) {
        guard body.count <= Self.maxBodySize else { throw .tooLarge(limit: Self.maxBodySize) }
        guard let text = String(validating: Array(body), as: UTF8.self) else { throw .badRequest("the body is not UTF-8") }
        guard let blank = text.range(of: "\n\n") else { throw .badRequest("no blank line before the checkpoint") }
        let head = text[..<blank.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
        guard let sizeLine = head.first, sizeLine.hasPrefix("old ") else { throw .badRequest("the first line is not \"old N\"") }
        guard let oldSize = Self.decimal(sizeLine.dropFirst(4)) else {
            throw .badRequest("the old size is not a decimal number without leading zeroes")
        }
        let proofLines = head.dropFirst()
        guard proofLines.count <= Self.maxProofLines else { throw .badRequest("more than \(Self.maxProofLines) proof lines") }
        var proof: [[UInt8]] = []
        for line in proofLines {
            guard let hash = Base64.decode(line), hash.count == MerkleHash.size else {
                throw .badRequest("a proof line is not base64 of a 32-byte hash")
            }
            proof.append(hash)
        }
        let checkpoint: SignedNote
        do { checkpoint = try SignedNote(parsing: String(text[blank.upperBound...])) } catch {
            throw .badRequest("the checkpoint is not a signed note: \(error)")
        }
        self.init(oldSize: oldSize, proof: proof, checkpoint: checkpoint)
    }

    /// The body a client sends.
    public var body: String {
        "old \(oldSize)\n" + proof.map { Base64.encode($0) + "\n" }.joined() + "\n" + checkpoint.serialized
    }

    /// A tree size as tlog-witness writes it: ASCII digits, no sign, no leading zero but `0`.
    static func decimal(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              text == "0" || !text.hasPrefix("0")
        else { return nil }
        return Int64(text)
    }
}
