import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import StepSignSystem

/// What a monitor keeps between runs, in its own state file (SPEC §5.6): the last checkpoint
/// it checked (origin, size, and the tree's right edge, from which the next checkpoint's root
/// must grow), and what the log's events brought in: the users and signing keys that may sign,
/// and the keys' revocation indexes.
public struct MonitorState: Sendable, Equatable {
    /// The log's origin (nil: nothing seen yet).
    public var origin: String?
    /// The tree of the last checkpoint checked.
    public var frontier: MerkleFrontier
    /// Whether an event has been seen: before the first, users and keys are taken as they come
    /// (a log from before events, SPEC §5.4); from it on, each needs its event.
    public var eventsBegan = false
    /// Users an event brought in (or seen before events began), not removed since.
    public var users: Set<String> = []
    /// Signing keys an event brought in (or seen before events began).
    public var kids: Set<String> = []
    /// Revoked keys' log indexes, from `signingKeyRevoked` events.
    public var revokedAt: [String: Int64] = [:]

    public init() {
        frontier = MerkleFrontier()
    }

    /// The state as JSON (one object, members sorted).
    public var json: JSONValue {
        .object([
            ("origin", origin.map { .string($0) } ?? .null),
            ("size", .int(frontier.size)),
            ("frontier", .array(frontier.edgeHashes.map { .string(Base64.encode($0)) })),
            ("eventsBegan", .bool(eventsBegan)),
            ("users", .array(users.sorted().map { .string($0) })),
            ("kids", .array(kids.sorted().map { .string($0) })),
            ("revokedAt", .object(revokedAt.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })),
        ]).sortingKeys
    }

    /// Reads a state written by ``json``.
    public init(json: JSONValue) throws(TileError) {
        guard let size = json["size"]?.intValue, let edge = json["frontier"]?.arrayValue,
              let eventsBegan = json["eventsBegan"]?.boolValue, let users = json["users"]?.arrayValue,
              let kids = json["kids"]?.arrayValue, case let .object(revoked)? = json["revokedAt"]
        else { throw .malformed("not a monitor state") }
        var hashes: [[UInt8]] = []
        for hash in edge {
            guard let text = hash.stringValue, let bytes = Base64.decode(text) else { throw .malformed("a frontier hash is not base64") }
            hashes.append(bytes)
        }
        do { frontier = try MerkleFrontier(size: size, hashes: hashes) } catch {
            throw .malformed("the frontier does not fit size \(size)")
        }
        origin = json["origin"]?.stringValue
        self.eventsBegan = eventsBegan
        self.users = Set(users.compactMap(\.stringValue))
        self.kids = Set(kids.compactMap(\.stringValue))
        self.revokedAt = Dictionary(revoked.compactMap { name, value in value.intValue.map { (name, $0) } },
                                    uniquingKeysWith: min)
    }

    /// The state in `path`, or a new one if there is no such file.
    public static func load(_ path: String) throws -> MonitorState {
        let bytes: [UInt8]
        do { bytes = try SecureFile.read(path) } catch {
            if error.errno == 2 { return MonitorState() }
            throw error
        }
        do {
            return try MonitorState(json: try JSONParser.parse(bytes))
        } catch {
            throw TileError.malformed("\(path): \(error)")
        }
    }

    /// Writes the state to `path` atomically and durably (0600).
    public func save(_ path: String) throws {
        try SecureFile.writeAtomically(json.jsonBytes + [0x0A], to: path, mode: 0o600)
    }
}
