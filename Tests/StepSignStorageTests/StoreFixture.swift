import Foundation
import StepSignCrypto
import StepSignFormat
import Synchronization
import Testing
@testable import StepSignStorage
import StepSignPostgres
import StepSignTestSupport

/// A fresh state directory under the system temp directory, removed by `cleanUp()`.
struct TemporaryStateDirectory {
    let parent: String
    let path: String

    init() throws {
        let parent = try TemporaryDirectory("storage-tests").path
        self.parent = parent
        self.path = parent + "/state"
    }

    func open() throws -> SQLiteStore {
        try SQLiteStore.open(stateDirectory: path, seal: TestSeal.seal, sealUnsealed: true)
    }

    func cleanUp() {
        try? FileManager.default.removeItem(atPath: parent)
    }
}

/// Opens a store in a fresh directory, runs `body`, closes the store and removes the directory.
@discardableResult
func withStore<T>(_ body: (SQLiteStore, TemporaryStateDirectory) async throws -> T) async throws -> T {
    let directory = try TemporaryStateDirectory()
    defer { directory.cleanUp() }
    let store = try directory.open()
    do {
        let result = try await body(store, directory)
        try await store.close()
        return result
    } catch {
        try? await store.close()
        throw error
    }
}

let epoch = Date(timeIntervalSince1970: 1_750_000_000)

func newUser(_ name: String, hash: String = "scrypt$initial", mustChange: Bool = false) -> NewUser {
    NewUser(name: name, passwordHash: hash, mustChangePassword: mustChange, createdAt: epoch)
}

func ledgerAppend(_ index: Int, user: String = "alice") -> LedgerAppend {
    LedgerAppend(
        signatureID: String(format: "0190a0b0-0000-7000-8000-%012d", index),
        user: user,
        iat: 1_750_000_000 + Int64(index),
        kid: "kid-1",
        jws: "eyJhbGciOiJFUzI1NiJ9.eyJqdGkiOiJ\(index)In0.sig\(index)",
        peer: LedgerPeer(uid: 1000, pid: 4242, comm: "tester"),
        authLevel: 1
    )
}

func ledgerBatch(_ range: Range<Int>, user: String = "alice") -> [LedgerAppend] {
    range.map { ledgerAppend($0, user: user) }
}

/// A storage backend the store-protocol tests run against: every test written against
/// `StepSignStore` runs on each.
enum StoreBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgresql

    /// SQLite always; PostgreSQL when the test server is set (or required, see
    /// ``PostgresTestServer``), else with a note on stderr that its runs were left out.
    static var allCases: [StoreBackend] {
        PostgresTestServer.enabled ? [.sqlite, .postgresql] : [.sqlite]
    }

    var testDescription: String { rawValue }
}

/// Opens a store of `backend` in a fresh place (a new directory; a new PostgreSQL database),
/// runs `body` against the protocol, closes the store and removes what it made.
@discardableResult
func withStore<T>(_ backend: StoreBackend, _ body: (any StepSignStore) async throws -> T) async throws -> T {
    try await withStores(backend, count: 1) { stores in try await body(stores[0]) }
}

/// Like ``withStore(_:_:)`` with `count` stores on the same data, as `count` daemons would
/// have: SQLite stores on one file; PostgreSQL stores with pools of their own on one database.
@discardableResult
func withStores<T>(_ backend: StoreBackend, count: Int, _ body: ([any StepSignStore]) async throws -> T) async throws -> T {
    switch backend {
    case .sqlite:
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        var stores: [SQLiteStore] = []
        do {
            for _ in 0..<count { stores.append(try directory.open()) }
            let result = try await body(stores)
            for store in stores { try await store.close() }
            return result
        } catch {
            for store in stores { try? await store.close() }
            throw error
        }
    case .postgresql:
        return try await withPostgresDatabase { database in
            var stores: [PostgresStore] = []
            do {
                for _ in 0..<count { stores.append(try await database.open()) }
                let result = try await body(stores)
                for store in stores { try await store.close() }
                return result
            } catch {
                for store in stores { try? await store.close() }
                throw error
            }
        }
    }
}

/// The log core's checkpoints for the store tests: a stand-in note `note <size> <root hex>` at
/// every multiple of `every`, signed before the commit as the engine's core does.
final class TestCheckpointSigner: Sendable {
    let every: Int
    private let state = Mutex<[Int64]>([])

    init(every: Int) {
        self.every = every
    }

    /// The sizes of the checkpoints committed, in order.
    var signedSizes: [Int64] { state.withLock { $0 } }

    func note(size: Int64, root: [UInt8]) -> LogCheckpointRecord {
        LogCheckpointRecord(size: size, instance: "test", note: "note \(size) \(Hex.encode(root))\n", createdAt: epoch)
    }

    func committed(_ sizes: [Int64]) {
        state.withLock { $0 += sizes }
    }
}

extension LedgerStore {
    /// Appends `batch` as the log core does, with `checkpoints`' notes at its multiples: the
    /// batch computed on the tail as stored, committed if the tail is still that one, computed
    /// again when it moved.
    func appendLedger(_ batch: [LedgerAppend], checkpoints: TestCheckpointSigner) async throws -> [LedgerEntry] {
        let every = Int64(checkpoints.every)
        while true {
            let head = try await ledgerHead()
            var commit = LedgerCommit(items: batch, after: head, tree: try await ledgerFrontier(size: head.seq), createdAt: epoch,
                                      rootsAt: { $0 % every == 0 })
            commit.checkpoints = commit.roots.keys.sorted().map { checkpoints.note(size: $0, root: commit.roots[$0]!) }
            if case .committed(let entries) = try await commitLedger(commit) {
                checkpoints.committed(commit.checkpoints.map(\.size))
                return entries
            }
        }
    }
}

/// Runs `body` with a store of `backend` and a way to run SQL on its data behind its back
/// (the SQLite file's writer; PostgreSQL's superuser).
func withTamperableStore(_ backend: StoreBackend,
                         _ body: (any StepSignStore, _ raw: (String) async throws -> Void) async throws -> Void) async throws {
    switch backend {
    case .sqlite:
        try await withStore { store, _ in
            try await body(store) { sql in try await store.executeRawSQL(sql) }
        }
    case .postgresql:
        try await withPostgresDatabase { database in
            let store = try await database.open()
            do {
                try await body(store) { sql in try await PostgresTestServer.administer(sql, database: database.name) }
                try await store.close()
            } catch {
                try? await store.close()
                throw error
            }
        }
    }
}

extension CounterStore {
    /// Reserves an attempt of `name` under a new ``ReservationID``, as an answer about to be
    /// checked does; the reservation stays in flight (nothing settles it).
    @discardableResult
    func reserveAttempt(name: String, maxAttempts: Int, blockSeconds: Int, now: Date) async throws -> AttemptReservation {
        try await reserveAttempt(try ReservationID.random(), name: name, maxAttempts: maxAttempts, blockSeconds: blockSeconds,
                                 now: now)
    }

    /// A wrong answer of `name` at `now`, as the engine settles one: an attempt reserved, then
    /// spent. Nil when no attempt was granted (the answer was not checked).
    @discardableResult
    func wrongAnswer(_ name: String, maxAttempts: Int = 3, blockSeconds: Int = 0, now: Date = epoch) async throws -> SpentAttempt? {
        let id = try ReservationID.random()
        guard case .granted = try await reserveAttempt(id, name: name, maxAttempts: maxAttempts, blockSeconds: blockSeconds,
                                                       now: now) else { return nil }
        return try await spendAttempt(id, name: name, maxAttempts: maxAttempts, blockSeconds: blockSeconds, now: now)
    }

    /// A right answer of `name` at `now`: an attempt reserved, then given back if granted.
    @discardableResult
    func rightAnswer(_ name: String, maxAttempts: Int = 3, blockSeconds: Int = 0, now: Date = epoch) async throws -> AttemptReservation {
        let id = try ReservationID.random()
        let reservation = try await reserveAttempt(id, name: name, maxAttempts: maxAttempts, blockSeconds: blockSeconds, now: now)
        if case .granted = reservation { try await giveBackAttempt(id, name: name, now: now) }
        return reservation
    }
}
