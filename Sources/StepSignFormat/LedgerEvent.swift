import StepSignCrypto
import StepSignProtocol

/// A change of who may sign, recorded in the ledger beside the signatures (SPEC §5.4): a
/// compact JWS, header `{"alg":"ES256","kid","typ":"stepsign-event+jwt"}`, signed like a
/// signature, with claims `{iss, jti, event, user?, peer, iat, details}`.
///
/// `jti` (a UUIDv7, as a signature ID) is what the ledger row's ID column holds, so every
/// column of an event's row is fixed by its JWS, as for a signature. `details` never holds a
/// secret nor a hash of one: key IDs, labels, the configuration's SHA-256.
public struct LedgerEvent: Sendable, Equatable {
    /// The `typ` header value of every event.
    public static let headerType = "stepsign-event+jwt"

    /// The changes SPEC §5.4 lists.
    public enum Kind: String, Sendable, CaseIterable {
        case userAdded, userRemoved, userBlocked, userUnlocked
        case passwordChanged, passwordExpired, passwordReset
        case deviceKeyEnrolled, deviceKeyRevoked
        case signingKeyCreated, signingKeyEndorsed, signingKeyRotated, signingKeyRevoked
        case configurationLoaded
        /// Membership of the stepsign user groups approver lists name (SPEC §3.4).
        case groupMemberAdded, groupMemberRemoved
        /// The steps of a request that needs approval by several people (SPEC §3.4).
        case approvalRequested, approvalGranted, approvalDenied, approvalExpired, approvalSigned
        /// A new log epoch (SPEC §5.5, `admin.recover`): after a restore that lost entries, the
        /// log goes on under a new origin; the event names the previous checkpoint and the lost
        /// range.
        case logEpochStarted
    }

    /// The daemon instance that recorded it.
    public var iss: String
    /// The event's ID (UUIDv7): the ledger row's ID.
    public var jti: String
    /// What happened: a ``Kind`` raw value (others are kept as read, for newer daemons').
    public var event: String
    /// The user it concerns, if any.
    public var user: String?
    /// The local process whose request made the change (the daemon itself for its own).
    public var peer: SignaturePeer
    /// When, Unix seconds.
    public var iat: Int64
    /// What else identifies the change (a JSON object).
    public var details: [(String, JSONValue)]

    /// An event with the given values.
    public init(iss: String, jti: String, kind: Kind, user: String?, peer: SignaturePeer, iat: Int64,
                details: [(String, JSONValue)] = []) {
        self.init(iss: iss, jti: jti, event: kind.rawValue, user: user, peer: peer, iat: iat, details: details)
    }

    init(iss: String, jti: String, event: String, user: String?, peer: SignaturePeer, iat: Int64,
         details: [(String, JSONValue)]) {
        self.iss = iss
        self.jti = jti
        self.event = event
        self.user = user
        self.peer = peer
        self.iat = iat
        self.details = details
    }

    /// The kind, when this daemon knows it.
    public var kind: Kind? { Kind(rawValue: event) }

    /// A string member of `details`.
    public func detail(_ name: String) -> String? {
        details.first { $0.0 == name }?.1.stringValue
    }

    /// The claims as compact JSON, members in the order of SPEC §5.4.
    public var jsonBytes: [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.member("iss", iss)
        writer.member("jti", jti)
        writer.member("event", event)
        if let user { writer.member("user", user) }
        peer.write(into: &writer)
        writer.member("iat", iat)
        writer.member("details", .object(details))
        writer.endObject()
        return writer.bytes
    }

    /// Signs this event with `key`, naming it `kid`.
    public func signed(key: P256PrivateKey, kid: String) throws(OpenSSLError) -> String {
        try JWS.signES256(headerJSON: ES256Header.json(kid: kid, typ: Self.headerType), payload: jsonBytes, key: key)
    }

    /// The event in `compact` and the kid that signed it, once it is proven to be one: the
    /// rules of ``StepSignSignature`` (ES256, low-S, no duplicate members), `typ`
    /// stepsign-event+jwt, and the claims' types.
    public static func verify(_ compact: String,
                              trustedKeys: TrustedKeys) throws(SignatureVerificationError) -> (event: LedgerEvent, kid: String) {
        let (jws, kid) = try StepSignSignature.verifiedPayload(compact, type: headerType, trustedKeys: trustedKeys)
        return (try decode(jws.payload), kid)
    }

    /// The claims of an event's compact JWS read WITHOUT checking its signature: only to index
    /// an entry the caller verifies elsewhere (the upgrade that indexes requests' events; the
    /// audit verifies every entry). Nil when they cannot be read.
    public static func unverifiedClaims(_ compact: String) -> LedgerEvent? {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(String(parts[1])) else { return nil }
        return try? decode(payload)
    }

    /// Reads signed claims (the strict parser: no member twice).
    static func decode(_ payload: [UInt8]) throws(SignatureVerificationError) -> LedgerEvent {
        let claims: JSONValue
        do {
            claims = try JSONParser.parse(payload)
        } catch {
            if let name = error.duplicateMember { throw .duplicateMember(name) }
            throw .malformedClaims(error.description)
        }
        guard let iss = claims["iss"]?.stringValue, let jti = claims["jti"]?.stringValue,
              let event = claims["event"]?.stringValue, let iat = claims["iat"]?.intValue,
              let peer = claims["peer"], let uid = peer["uid"]?.intValue, let pid = peer["pid"]?.intValue,
              let comm = peer["comm"]?.stringValue, let details = claims["details"]?.members,
              let peerUID = UInt32(exactly: uid), let peerPID = Int32(exactly: pid)
        else {
            throw .malformedClaims("an event needs iss, jti, event, peer {uid, pid, comm}, iat and details of their types")
        }
        let user = claims["user"]
        guard user == nil || user?.stringValue != nil else { throw .malformedClaims("user must be a string") }
        return LedgerEvent(iss: iss, jti: jti, event: event, user: user?.stringValue,
                           peer: SignaturePeer(uid: peerUID, pid: peerPID, comm: comm), iat: iat, details: details)
    }

    public static func == (lhs: LedgerEvent, rhs: LedgerEvent) -> Bool {
        lhs.jsonBytes == rhs.jsonBytes
    }
}
