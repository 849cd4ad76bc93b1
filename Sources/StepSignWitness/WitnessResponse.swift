import StepSignFormat

/// What a client of C2SP tlog-witness v1 reads from a witness's reply to `add-checkpoint`.
public enum WitnessResponse {
    /// The witness's size in a 409 reply: a decimal and a newline (`text/x.tlog.size`).
    public static func conflictSize(_ body: String) throws(NoteError) -> Int64 {
        guard body.hasSuffix("\n"), let size = AddCheckpointRequest.decimal(body.dropLast()[...]) else {
            throw .malformed("a 409 reply's body is a tree size and a newline")
        }
        return size
    }

    /// The cosignature lines of `witness` in a 200 reply to the submission of `checkpoint`,
    /// each verified. Lines of other keys are ignored (the protocol says a client must); a line
    /// of the witness's key that does not verify, or none at all, is an error: the witness
    /// misbehaves.
    public static func cosignatures(_ body: String, of checkpoint: SignedNote,
                                    witness: NoteVerifierKey) throws(NoteError) -> [SignedNote.Signature] {
        let reply = try SignedNote(parsing: checkpoint.text + "\n" + body)
        let lines = reply.signatures.filter { $0.name == witness.name && $0.keyID == witness.keyID }
        guard !lines.isEmpty else { throw .notVerified("the reply has no cosignature of \(witness.name)") }
        let bytes = Array(checkpoint.text.utf8)
        for line in lines where witness.type != .cosignatureV1 || !witness.isValidSignature(line.bytes, text: bytes) {
            throw .notVerified("a cosignature of \(witness.name) does not verify over the checkpoint")
        }
        return lines
    }
}
