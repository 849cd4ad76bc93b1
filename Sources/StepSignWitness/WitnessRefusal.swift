/// Why a witness did not cosign a submitted checkpoint: each case is one status of C2SP
/// tlog-witness v1's `add-checkpoint` (SPEC §5.6), with the body the witness answers.
public enum WitnessRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// 400: the body is not an old size line, proof lines, a blank line and a checkpoint, or the
    /// old size is above the checkpoint's.
    case badRequest(String)
    /// 403: no signature of a key the witness trusts for the origin verifies.
    case untrustedSignature(String)
    /// 404: the witness knows no log of that origin.
    case unknownOrigin(String)
    /// 409: the old size is not the size the witness last cosigned (which it tells), or the
    /// same size came with another root hash.
    case conflict(witnessSize: Int64)
    /// 413: the body is larger than any valid request.
    case tooLarge(limit: Int)
    /// 422: the consistency proof does not show the checkpoint extends what the witness cosigned.
    case inconsistent(String)
    /// 500: the witness could not make its state durable, so it cosigns nothing.
    case storageFailed(String)

    /// The HTTP status code.
    public var status: Int {
        switch self {
        case .badRequest: 400
        case .untrustedSignature: 403
        case .unknownOrigin: 404
        case .conflict: 409
        case .tooLarge: 413
        case .inconsistent: 422
        case .storageFailed: 500
        }
    }

    /// The response's content type: 409 is `text/x.tlog.size`, as the protocol requires.
    public var contentType: String {
        if case .conflict = self { return "text/x.tlog.size" }
        return "text/plain; charset=utf-8"
    }

    /// The response body: for 409 the witness's size and a newline; otherwise the reason, which
    /// names nothing secret (the witness holds no secret but its key).
    public var body: String {
        switch self {
        case let .conflict(size): "\(size)\n"
        case .storageFailed: "the witness could not store its state\n"
        default: description + "\n"
        }
    }

    public var description: String {
        switch self {
        case let .badRequest(why): "bad request: \(why)"
        case let .untrustedSignature(why): "no trusted log signature: \(why)"
        case let .unknownOrigin(origin): "unknown origin: \(origin)"
        case let .conflict(size): "the witness last cosigned size \(size)"
        case let .tooLarge(limit): "the request is larger than \(limit) bytes"
        case let .inconsistent(why): "inconsistent: \(why)"
        case let .storageFailed(why): "storage failed: \(why)"
        }
    }
}
