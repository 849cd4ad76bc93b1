import StepSignStorage
import Synchronization
import struct Foundation.Date

/// What one connection knows between its requests (SPEC §3: a connection is a session).
///
/// The server owns one per connection and hands it to `Engine.handle`, one request at a time,
/// so a session is never touched concurrently; only the engine changes it.
public struct Session: Sendable {
    /// Who is connected.
    public let peer: Peer
    /// This connection's number, unique in the daemon's life: the scope of a step-up reuse
    /// window of `reuse_scope = "session"` (SPEC §3.4).
    let id: UInt64
    private static let nextID = Atomic<UInt64>(1)
    /// Whether the peer may use `admin.*` operations under the access lists in force: the
    /// engine decides it again for every request (``Engine/handle(line:session:now:)``), so a
    /// reload applies to open connections.
    public internal(set) var isAdmin: Bool
    /// The logged-in user, if any.
    var login: Login?
    /// The challenge the client must answer next, if any.
    var pending: PendingChallenge?
    /// Signature IDs made in this session (the latest ``RecentSignatureIDs/capacity``):
    /// `getSignature` serves them to it.
    var signatureIDs = RecentSignatureIDs()

    /// A new session of `peer`; whether it is an admin is decided with its first request.
    public init(peer: Peer) {
        self.init(peer: peer, isAdmin: false)
    }

    init(peer: Peer, isAdmin: Bool) {
        self.peer = peer
        self.isAdmin = isAdmin
        self.id = Self.nextID.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// Forgets the login and any open challenge (the session ended).
    public mutating func end() {
        login = nil
        pending = nil
    }

    /// A login (`onUserLoggedIn`): who, and what it was granted against.
    struct Login: Sendable {
        var user: String
        var sessionID: String
        /// The user's ``CredentialToken`` when the login was granted; a different stored one
        /// means the login has ended (``LoginEnd``).
        var credentialToken: CredentialToken
        /// When the login was granted (`server.session_max_seconds`, `lda.enroll_fresh_seconds`).
        var loggedInAt: Date
    }
}
