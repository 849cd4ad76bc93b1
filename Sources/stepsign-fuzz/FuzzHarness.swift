import Dispatch
import StepSignProtocol
import Foundation
import Logging
import StepSignConfig
import StepSignEngine
import StepSignStorage

/// One input of the fuzzer (or of a replayed regression file) against the real request path:
/// the strict JSON parser, request decoding and the engine's state machine on a real SQLite
/// store and keyring (cheap scrypt), in one session per input.
///
/// Input layout: the first byte picks the session (bit 0: admin peer), the rest is split into
/// lines at `\n` (at most `maxLines`), each line is one request as the server would hand it to
/// `Engine.handle(line:session:)`. Besides "does not crash", it checks what must hold for any
/// line: a parsed value written back parses to the same value; every reply is one JSON object
/// line that our parser reads back, echoing a readable `id`; a rejected request carries no
/// events.
enum FuzzHarness {
    static let maxLines = 48

    /// The engine every input shares, on a store in /dev/shm (or the temp directory).
    private static let engine: Engine = makeEngine()

    private static func makeEngine() -> Engine {
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        let directory = "\(base)/stepsign-fuzz-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        atexit { try? FileManager.default.removeItem(atPath: "/dev/shm/stepsign-fuzz-\(getpid())") }
        var settings = StepSignConfiguration.default
        settings.password.scryptN = 1024
        settings.signing.allowLevel0 = true
        // The engine admits each request: the fuzz peer is a client, uid 0 (the default) an admin.
        settings.access.clientUIDs = [peer.uid]
        var quiet = Logger(label: "stepsign-fuzz")
        quiet.logLevel = .critical
        let config = settings, logger = quiet
        let result = blocking { () async throws -> Engine in
            let (seal, created) = try SealKey.stateKey(stateDirectory: directory)
            let store = try SQLiteStore.open(stateDirectory: directory, seal: seal, sealUnsealed: created)
            let keyring = try await Keyring.open(directory: directory + "/keys", passphrase: nil, store: store, logger: logger)
            return try Engine(configuration: config, store: store, keyring: keyring, logger: logger)
        }
        let engine: Engine
        do { engine = try result.get() } catch { fatalError("stepsign-fuzz: cannot set up the engine: \(error)") }
        var admin = Session(peer: adminPeer)
        for line in [
            #"{"id":1,"op":"admin.addUser","user":"alice","password":"Tr1cky-Pelican-42"}"#,
            #"{"id":2,"op":"admin.addUser","user":"bob","password":"Brave-Otter-79","mustChangePassword":true}"#,
        ] {
            _ = handle(engine, Array(line.utf8), &admin)
        }
        return engine
    }

    static let peer = Peer(uid: 1000, gid: 1000, pid: 4242, comm: "fuzz", groups: [])
    /// An admin peer (uid 0 is in `access.admin_uids` by default).
    static let adminPeer = Peer(uid: 0, gid: 0, pid: 1, comm: "fuzz-admin", groups: [])

    /// Runs `body` on the concurrency runtime and waits for it: the fuzzer calls us on its own thread.
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do { box.value = .success(try await body()) } catch { box.value = .failure(error) }
            done.signal()
        }
        done.wait()
        return box.value!
    }

    private static func handle(_ engine: Engine, _ line: [UInt8], _ session: inout Session) -> Reply {
        let start = session
        let result = blocking { () async -> (Reply, Session) in
            var session = start
            let reply = await engine.handle(line: line, session: &session)
            return (reply, session)
        }
        let (reply, after) = try! result.get()
        session = after
        return reply
    }

    /// Runs one input; traps (a crash the fuzzer reports) when an invariant does not hold.
    static func run(_ data: [UInt8]) {
        guard let first = data.first else { return }
        let engine = self.engine
        var session = Session(peer: first & 1 == 1 ? adminPeer : peer)
        var lines = data.dropFirst().split(separator: 0x0A, maxSplits: maxLines, omittingEmptySubsequences: false)
        if lines.count > maxLines { lines.removeLast() }
        for slice in lines {
            var line = Array(slice)
            if line.last == 0x0D { line.removeLast() }  // as the server's frame decoder does
            checkParser(line)
            let reply = handle(engine, line, &session)
            checkReply(reply, for: line)
        }
    }

    /// A value the parser accepts is written back as JSON that parses to the same value.
    private static func checkParser(_ line: [UInt8]) {
        guard let value = try? JSONParser.parse(line) else { return }
        let written = value.jsonBytes
        guard let again = try? JSONParser.parse(written) else {
            fatalError("written JSON does not parse: \(String(decoding: written, as: UTF8.self))")
        }
        guard sameJSON(value, again) else {
            fatalError("JSON round trip changed the value: \(value) → \(again)")
        }
        _ = Request.decode(line)
    }

    /// Every reply is exactly one line of JSON that echoes the request's id; a refusal has no events.
    private static func checkReply(_ reply: Reply, for line: [UInt8]) {
        let bytes = reply.line
        guard bytes.last == 0x0A, bytes.dropLast().firstIndex(of: 0x0A) == nil else {
            fatalError("a reply is not exactly one line: \(String(decoding: bytes, as: UTF8.self))")
        }
        guard let parsed = try? JSONParser.parse(bytes.dropLast()), case .object = parsed else {
            fatalError("a reply does not parse as a JSON object: \(String(decoding: bytes, as: UTF8.self))")
        }
        if reply.error != nil, !reply.events.isEmpty {
            fatalError("a refused request raised events: \(String(decoding: bytes, as: UTF8.self))")
        }
        if case let .success(request) = Request.decode(line), !sameJSON(parsed["id"] ?? .null, request.id) {
            fatalError("the reply does not echo the id: \(String(decoding: bytes, as: UTF8.self))")
        }
    }

    /// JSON equality with numbers compared by value (the writer prints an integral double as an integer).
    static func sameJSON(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case let (.int(x), .double(y)), let (.double(y), .int(x)): Double(x) == y
        case let (.array(x), .array(y)): x.count == y.count && zip(x, y).allSatisfy { sameJSON($0, $1) }
        case let (.object(x), .object(y)):
            x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && sameJSON($0.1, $1.1) }
        default: a == b
        }
    }
}

/// Carries a result from the task that computed it to the thread that waits for it.
private final class ResultBox<T>: @unchecked Sendable {
    var value: Result<T, any Error>?
}
