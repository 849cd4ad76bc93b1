import Foundation
import GRDB
import StepSignPostgres
@testable import StepSignStorage
import Testing

/// The log's stored C2SP checkpoints and its one origin (SPEC §5.5), the same contract on both
/// stores: one note per size and instance (a second is ignored, never replaces the first), read
/// back by size; the first origin stored wins, also when daemons race to store theirs; one
/// witness cosignature row per size, witness and line (a forged row does not keep the genuine
/// line out); one epoch per number and origin.
@Suite struct LogCheckpointStoreTests {
    static let epoch = Date(timeIntervalSince1970: 1_750_000_000)

    static func checkContract(_ store: any StepSignStore) async throws {
        #expect(try await store.logOrigin() == nil)
        #expect(try await store.logCheckpoints(afterSize: -1, throughSize: nil).isEmpty)
        // Eight daemons starting at once, each with its own origin: one is stored, all see it.
        let claimed = try await withThrowingTaskGroup(of: String.self) { group in
            for number in 0..<8 { group.addTask { try await store.claimLogOrigin("host\(number).example/log") } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(claimed.count == 1, "\(claimed)")
        let origin = try #require(claimed.first)
        #expect(try await store.logOrigin() == origin)
        #expect(try await store.claimLogOrigin("late.example/log") == origin)

        for (size, instance) in [(Int64(3), "a"), (3, "b"), (7, "a"), (0, "a")] {
            try await store.appendLogCheckpoint(LogCheckpointRecord(size: size, instance: instance, note: "note \(size) \(instance)",
                                                                    createdAt: epoch))
        }
        // The same size and instance again: the first stays.
        try await store.appendLogCheckpoint(LogCheckpointRecord(size: 3, instance: "a", note: "another", createdAt: epoch))
        let all = try await store.logCheckpoints(afterSize: -1, throughSize: nil)
        #expect(all.map(\.note) == ["note 0 a", "note 3 a", "note 3 b", "note 7 a"])
        #expect(try await store.logCheckpoints(afterSize: 0, throughSize: 3).map(\.note) == ["note 3 a", "note 3 b"])
        #expect(try await store.logCheckpoints(afterSize: 3, throughSize: nil).map(\.size) == [7])

        // Witnesses' cosignatures (SPEC §5.6): one row per size, witness and line. A row
        // written for (size, witness) before the witness answered (a forged line: the store
        // does not check) does not keep its genuine line out: both are stored and read back,
        // by witness and line, and the daemon serves the one that verifies. The same line
        // again is one row, its first time kept.
        try await store.addLogCosignatures([
            LogCosignatureRecord(size: 7, witness: "w2", line: "w2 genuine", createdAt: epoch),
            LogCosignatureRecord(size: 7, witness: "w1", line: "w1 forged", createdAt: epoch),
            LogCosignatureRecord(size: 3, witness: "w1", line: "w1 at 3", createdAt: epoch),
        ])
        let later = epoch.addingTimeInterval(60)
        try await store.addLogCosignatures([LogCosignatureRecord(size: 7, witness: "w1", line: "w1 genuine", createdAt: later),
                                            LogCosignatureRecord(size: 7, witness: "w2", line: "w2 genuine", createdAt: later),
                                            LogCosignatureRecord(size: 7, witness: "w1", line: "w1 genuine", createdAt: later)])
        let atSeven = try await store.logCosignatures(size: 7)
        #expect(atSeven.map(\.line) == ["w1 forged", "w1 genuine", "w2 genuine"])
        #expect(atSeven.map(\.createdAt) == [epoch, later, epoch])
        #expect(try await store.logCosignatures(size: 3).map(\.line) == ["w1 at 3"])
        #expect(try await store.logCosignatures(size: 4).isEmpty)

        // The log's epochs (SPEC §5.5, `admin.recover`): appended, read back by number; two
        // recoveries racing for one number store one, the other is told.
        #expect(try await store.logEpochs().isEmpty)
        let raced = await withTaskGroup(of: Bool.self) { group in
            for number in 0..<4 {
                group.addTask {
                    do {
                        try await store.addLogEpoch(LogEpochRecord(epoch: 2, origin: "\(origin)/epoch2-\(number)",
                                                                   firstIndex: 10, createdAt: epoch))
                        return true
                    } catch StorageError.logEpochExists(2) {
                        return false
                    } catch {
                        Issue.record("\(error)")
                        return false
                    }
                }
            }
            return await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        #expect(raced == 1)
        let second = LogEpochRecord(epoch: 3, origin: origin + "/epoch3", firstIndex: 20, createdAt: epoch)
        try await store.addLogEpoch(second)
        await #expect(throws: StorageError.self) {
            try await store.addLogEpoch(LogEpochRecord(epoch: 4, origin: origin + "/epoch3", firstIndex: 30, createdAt: epoch))
        }
        let epochs = try await store.logEpochs()
        #expect(epochs.map(\.epoch) == [2, 3] && epochs.last == second && epochs.first?.firstIndex == 10)
    }

    @Test func sqlite() async throws {
        try await withStore { store, _ in try await Self.checkContract(store) }
    }

    /// SQLite schema v17 keys the cosignatures by size, witness and line: an upgraded ledger
    /// keeps its rows (a forged one among them), stores the genuine line beside the forged
    /// one, and the table stays append-only.
    @Test func anSQLiteLogFromBeforeV17KeepsItsCosignaturesOnUpgrade() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let path = directory.path + "/" + SQLiteStore.fileName
        do {
            let queue = try DatabaseQueue(path: path)
            try SQLiteSchema.migrator.migrate(queue, upTo: "v16-fido2-credentials")
            try await queue.write { db in
                try db.execute(sql: """
                    INSERT INTO log_cosignatures (size, witness, line, created_at)
                    VALUES (5, 'w1', 'w1 forged', 1), (5, 'w2', 'w2 genuine', 2)
                    """)
            }
            try queue.close()
        }
        let store = try directory.open()
        try await store.addLogCosignatures([LogCosignatureRecord(size: 5, witness: "w1", line: "w1 genuine", createdAt: Self.epoch)])
        #expect(try await store.logCosignatures(size: 5).map(\.line) == ["w1 forged", "w1 genuine", "w2 genuine"])
        try await store.close()
        let queue = try DatabaseQueue(path: path)
        for sql in ["UPDATE log_cosignatures SET line = 'x'", "DELETE FROM log_cosignatures"] {
            #expect(throws: DatabaseError.self, "\(sql)") { try queue.write { db in try db.execute(sql: sql) } }
        }
        let rows = try await queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM log_cosignatures") }
        #expect(rows == 3)
        try queue.close()
    }

    @Test(.enabled(if: PostgresTestServer.enabled))
    func postgres() async throws {
        try await withPostgresDatabase { database in
            let store = try await database.open()
            do {
                try await Self.checkContract(store)
            } catch {
                try? await store.close()
                throw error
            }
            try await store.close()
        }
    }
}
