import StepSignCrypto
import StepSignFormat
import StepSignProtocol

/// The monitor's rules for each new entry of the log (SPEC §5.6), over a ``MonitorState``: the
/// entry's JWS verifies with a trusted key (else an untrusted key, or a bad entry), a revoked
/// key signs nothing from its revocation index on, and once the log has events, every user and
/// signing key an entry names came in by its event (`userAdded`; `signingKeyCreated`,
/// `signingKeyEndorsed`, `signingKeyRotated`); a level-0 signature's user is a label (no one
/// was authenticated) and needs no event. Each entry is reported as one JSON line.
public struct LogMonitor: Sendable {
    public private(set) var state: MonitorState
    public let keys: TrustedKeys

    public init(state: MonitorState, keys: TrustedKeys) {
        self.state = state
        self.keys = keys
    }

    /// Checks entry `index` (its JWS bytes) and returns its report line, or the alarm.
    public mutating func check(index: Int64, entry: [UInt8]) throws(MonitorAlarm) -> JSONValue {
        guard let jws = String(validating: entry, as: UTF8.self) else {
            throw MonitorAlarm(.badEntry, index: index, "the entry is not UTF-8")
        }
        let verified: VerifiedLogEntry
        switch VerifiedLogEntry.verify(jws, keys: keys) {
        case let .success(entry): verified = entry
        case let .failure(.unknownKeyID(kid)): throw MonitorAlarm(.untrustedKey, index: index, "signed by key \(kid), which is not trusted")
        case let .failure(error): throw MonitorAlarm(.badEntry, index: index, "\(error)")
        }
        if let revoked = state.revokedAt[verified.kid] ?? keys.revokedAt[verified.kid], index >= revoked {
            throw MonitorAlarm(.badEntry, index: index, "signed by key \(verified.kid) after its revocation at log index \(revoked)")
        }
        // Before the log's first event (and for that event itself, which nothing can precede
        // in a log from before events), users and keys are taken as they come.
        if !state.eventsBegan {
            state.kids.insert(verified.kid)
            if !verified.user.isEmpty { state.users.insert(verified.user) }
        }
        if let event = verified.event {
            follow(event, index: index)
        }
        guard state.kids.contains(verified.kid) else {
            throw MonitorAlarm(.keyWithoutEvent, index: index, "key \(verified.kid) signs, but no event of the log brought it in")
        }
        // A level-0 signature authenticated nobody: its user is a label, not a user of the daemon.
        if !verified.user.isEmpty, verified.authLevel != 0, verified.event?.kind != .userAdded,
           verified.event?.kind != .userRemoved, !state.users.contains(verified.user) {
            throw MonitorAlarm(.userWithoutEvent, index: index, "user \"\(verified.user)\" appears, but no userAdded event of the log brought it in (or it was removed)")
        }
        if verified.event?.kind == .userRemoved { state.users.remove(verified.user) }
        return Self.report(verified, index: index)
    }

    private mutating func follow(_ event: LedgerEvent, index: Int64) {
        state.eventsBegan = true
        switch event.kind {
        case .userAdded:
            if let user = event.user { state.users.insert(user) }
        case .signingKeyCreated, .signingKeyEndorsed, .signingKeyRotated:
            if let kid = event.detail("kid") { state.kids.insert(kid) }
        case .signingKeyRevoked:
            if let kid = event.detail("kid") { state.revokedAt[kid] = min(state.revokedAt[kid] ?? index, index) }
        default:
            break
        }
    }

    static func report(_ entry: VerifiedLogEntry, index: Int64) -> JSONValue {
        let peer: JSONValue = entry.peer.map {
            .object([("uid", .int(Int64($0.uid))), ("pid", .int(Int64($0.pid))), ("comm", .string($0.comm))])
        } ?? .null
        if let event = entry.event {
            return .object([("index", .int(index)), ("type", .string("event")), ("event", .string(event.event)),
                            ("jti", .string(entry.jti)), ("user", event.user.map { .string($0) } ?? .null),
                            ("kid", .string(entry.kid)), ("iat", .int(entry.iat)), ("peer", peer),
                            ("details", .object(event.details))])
        }
        return .object([("index", .int(index)), ("type", .string("signature")), ("jti", .string(entry.jti)),
                        ("user", .string(entry.user)), ("authLevel", entry.authLevel.map { .int(Int64($0)) } ?? .null),
                        ("kid", .string(entry.kid)), ("iat", .int(entry.iat)), ("peer", peer)])
    }
}
