import StepSignFormat
import StepSignStorage

/// The stored cosignature rows of one checkpoint, checked against the `[[witness]]` keys over
/// its text (SPEC §5.5: a stored cosignature is a claim until checked, again before it is
/// served). The store keys a row by size, witness and line, so a row written for a witness
/// behind the daemon's back sits beside the witness's genuine line and never keeps it out;
/// this picks, per witness, the first row (by line, as the store reads them) that verifies:
/// every daemon serves the same one, and a verifier sees one line per witness.
struct CheckedCosignatures {
    /// The rows served: one per witness that has a row that verifies, by witness name.
    private(set) var served: [LogCosignatureRecord] = []
    /// The rows that do not verify with the key of the configured witness they name, or name
    /// none; never served.
    private(set) var failed: [LogCosignatureRecord] = []

    /// Checks `rows` (of one size) against `witnesses` over the checkpoint `text` (a note's
    /// text, ending in a newline).
    init(text: String, rows: [LogCosignatureRecord], witnesses: [NoteVerifierKey]) {
        var servedWitnesses = Set<String>()
        for row in rows {
            guard Self.verifies(row.line, text: text, witnesses: witnesses.filter { $0.name == row.witness }) else {
                failed.append(row)
                continue
            }
            if servedWitnesses.insert(row.witness).inserted { served.append(row) }
        }
    }

    /// The served lines, each ending in a newline, to append to the checkpoint's note.
    var lines: String { served.map { $0.line + "\n" }.joined() }

    /// Whether `line` is a valid cosignature of the checkpoint `text` by one of `witnesses`.
    static func verifies(_ line: String, text: String, witnesses: [NoteVerifierKey]) -> Bool {
        guard !witnesses.isEmpty, let candidate = try? SignedNote(parsing: text + "\n" + line + "\n"),
              candidate.signatures.count == 1 else { return false }
        return !candidate.cosigners(witnesses).isEmpty
    }
}
