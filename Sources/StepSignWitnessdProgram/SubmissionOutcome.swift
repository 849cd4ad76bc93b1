import StepSignProtocol

/// What one round did for one witness: printed as a JSON line by `--once`, logged otherwise.
struct SubmissionOutcome: Sendable {
    enum Kind: String, Sendable {
        /// The witness cosigned and the daemon stored the cosignature.
        case cosigned
        /// The checkpoint already carries a valid cosignature of the witness.
        case alreadyCosigned = "already-cosigned"
        /// Nothing to do now: waiting out a back-off, a refused checkpoint, or a witness ahead.
        case waiting
        /// Could not reach the witness or the daemon; retried after a back-off.
        case retry
        /// The witness or its reply says something is wrong (SPEC §5.6): logged at critical.
        case alarm
    }

    var witness: String
    var treeSize: Int64
    var kind: Kind
    var detail: String

    var json: JSONValue {
        .object([("witness", .string(witness)), ("treeSize", .int(treeSize)), ("outcome", .string(kind.rawValue)),
                 ("detail", .string(detail))])
    }
}
