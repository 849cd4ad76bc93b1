import Foundation
import Testing
@testable import StepSignStorage

@Suite struct FilePermissionTests {
    func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? Int)
    }

    @Test func theStateDirectoryIsCreated0700AndTheDatabaseFiles0600() async throws {
        try await withStore { store, directory async throws in
            _ = try await store.appendLedger(ledgerBatch(1..<3))
            #expect(try mode(directory.path) == 0o700)
            #expect(store.path == directory.path + "/stepsign.sqlite")
            for suffix in ["", "-wal", "-shm"] {
                let file = store.path + suffix
                if FileManager.default.fileExists(atPath: file) {
                    #expect(try mode(file) == 0o600, "\(file)")
                }
            }
            #expect(FileManager.default.fileExists(atPath: store.path + "-wal"))
        }
    }

    @Test func anExistingDatabaseFileIsTightenedTo0600() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: false)
        let file = directory.path + "/stepsign.sqlite"
        #expect(FileManager.default.createFile(atPath: file, contents: nil, attributes: [.posixPermissions: 0o644]))
        let store = try directory.open()
        #expect(try mode(file) == 0o600)
        try await store.close()
    }

    @Test func aStateDirectoryThatIsAFileIsRefused() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        #expect(FileManager.default.createFile(atPath: directory.path, contents: Data()))
        #expect(throws: StorageError.stateDirectory(path: directory.path, errno: ENOTDIR)) {
            try directory.open()
        }
    }
}

@Suite struct DurabilityTests {
    @Test func theWriterCommitsDurablyInWALModeWithForeignKeys() async throws {
        try await withStore { store, _ async throws in
            #expect(try await store.writerPragma("journal_mode") == "wal")
            #expect(try await store.writerPragma("synchronous") == "2") // FULL
            #expect(try await store.writerPragma("foreign_keys") == "1")
            #expect(try await store.writerPragma("busy_timeout") == "5000")
        }
    }
}
