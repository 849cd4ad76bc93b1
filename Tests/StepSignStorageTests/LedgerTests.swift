import Foundation
import StepSignFormat
import GRDB
import Testing
@testable import StepSignStorage

@Suite struct LedgerTests {
    @Test(arguments: StoreBackend.allCases)
    func anEmptyLedgerAuditsOkWithNoEntries(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            #expect(try await store.ledgerCount() == 0)
            #expect(try await store.auditLedger() == LedgerAudit(ok: true, entries: 0, firstBadSeq: nil))
            #expect(try await store.appendLedger([]).isEmpty)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aBatchGetsSequenceNumbersOneToNAndAChainedHash(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            let batch = ledgerBatch(1..<6)
            let entries = try await store.appendLedger(batch)
            #expect(entries.map(\.seq) == [1, 2, 3, 4, 5])
            #expect(entries.map(\.signatureID) == batch.map(\.signatureID))
            #expect(entries.first?.prevHash == LedgerChain.genesisHash)
            var previous = LedgerChain.genesisHash
            for entry in entries {
                #expect(entry.prevHash == previous)
                #expect(entry.entryHash == LedgerChain.entryHash(previous: previous, jws: entry.jws))
                previous = entry.entryHash
            }
            #expect(LedgerChain.audit(entries.map(\.link)).ok)
            #expect(try await store.ledgerCount() == 5)
            #expect(try await store.auditLedger() == LedgerAudit(ok: true, entries: 5, firstBadSeq: nil))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func storedEntriesEqualTheReturnedOnes(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            let entries = try await store.appendLedger(ledgerBatch(1..<4))
            let stored = try await store.ledgerEntries(afterSeq: 0, limit: 10)
            #expect(stored == entries)
            let second = try #require(entries.dropFirst().first)
            #expect(try await store.ledgerEntry(signatureID: second.signatureID) == second)
            #expect(second.peer == LedgerPeer(uid: 1000, pid: 4242, comm: "tester"))
            #expect(try await store.ledgerEntry(signatureID: "no-such-id") == nil)
        }
    }

    /// A batch made at a time the store keeps as it is (``LedgerStore/ledgerTime(_:)``, as the
    /// log core makes them) is answered with its own entries, not copies (issue 43); made at any
    /// other time, with the time rounded as stored. Either way they read back as answered.
    @Test(arguments: StoreBackend.allCases)
    func entriesAnsweredAtTheStoresTimeReadBackAsAnswered(_ backend: StoreBackend) async throws {
        for rounded in [true, false] {
            try await withStore(backend) { store async throws in
                let now = Date(timeIntervalSince1970: 1_790_000_000.123_456_789)
                let made = rounded ? store.ledgerTime(now) : now
                #expect(store.ledgerTime(made) == made || !rounded)
                let commit = LedgerCommit(items: ledgerBatch(1..<4), after: try await store.ledgerHead(), tree: MerkleFrontier(),
                                          createdAt: made)
                guard case let .committed(entries) = try await store.commitLedger(commit) else {
                    Issue.record("the batch did not commit")
                    return
                }
                #expect(try await store.ledgerEntries(afterSeq: 0, limit: 10) == entries)
                #expect(entries.allSatisfy { $0.createdAt == store.ledgerTime(now) })
            }
        }
    }

    /// Each column at the edges of its type reads back as appended (the SQLite store binds the
    /// ledger's rows straight to SQLite, issue 43): non-ASCII and empty text, the largest uid,
    /// a negative pid, the ends of `iat` and the time to its precision.
    @Test(arguments: StoreBackend.allCases)
    func everyColumnReadsBackAsAppendedAtTheEdgesOfItsType(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            var edgy = ledgerAppend(1, user: "zoë-ñ")
            edgy.kid = "kid-\u{1F511}"
            edgy.iat = .max
            edgy.peer = LedgerPeer(uid: .max, pid: -1, comm: "")
            edgy.authLevel = 0
            var other = ledgerAppend(2, user: "b")
            other.iat = .min
            other.peer = LedgerPeer(uid: 0, pid: .max, comm: "prozeß-ä")
            other.authLevel = 3
            let entries = try await store.appendLedger([edgy, other])
            let stored = try await store.ledgerEntries(afterSeq: 0, limit: 10)
            #expect(stored == entries)
            #expect(stored.map(\.user) == ["zoë-ñ", "b"])
            #expect(stored.map(\.kid) == ["kid-\u{1F511}", "kid-1"])
            #expect(stored.map(\.iat) == [.max, .min])
            #expect(stored.map(\.peer) == [edgy.peer, other.peer])
            #expect(stored.map(\.authLevel) == [0, 3])
            #expect(stored.map(\.jws) == [edgy.jws, other.jws])
            #expect(try await store.auditLedger().ok)
        }
    }

    @Test("SQLite stores text up to its first NUL, as a C string binds, and the row reads back so; the next row is whole")
    func sqliteTextEndsAtItsFirstNUL() async throws {
        try await withStore { store, _ in
            var cut = ledgerAppend(1, user: "alice")
            cut.peer = LedgerPeer(uid: 1, pid: 2, comm: "before\u{0}after")
            var whole = ledgerAppend(2, user: "bob")
            whole.peer = LedgerPeer(uid: 1, pid: 2, comm: "whole")
            _ = try await store.appendLedger([cut, whole])
            let stored = try await store.ledgerEntries(afterSeq: 0, limit: 10)
            #expect(stored.map(\.peer.comm) == ["before", "whole"])
            #expect(stored.map(\.jws) == [cut.jws, whole.jws])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func consecutiveBatchesContinueTheChain(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            let first = try await store.appendLedger(ledgerBatch(1..<4))
            let second = try await store.appendLedger(ledgerBatch(4..<6))
            #expect(second.map(\.seq) == [4, 5])
            #expect(second.first?.prevHash == first.last?.entryHash)
            #expect(try await store.auditLedger().ok)
        }
    }

    @Test("""
        a value SQLite refuses to bind (longer than its length limit) fails the batch with SQLITE_TOOBIG: nothing \
        is stored, and the next batch binds and commits as before
        """)
    func aValueSQLiteRefusesFailsTheBatchAndTheNextOneCommits() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        let store = try directory.open()
        try await store.limitValueLengthForTesting(2000)
        let long = LedgerAppend(signatureID: "0190a0b0-0000-7000-8000-000000000001", user: "alice", iat: 1_750_000_000,
                                kid: "kid-1", jws: String(repeating: "e", count: 2001),
                                peer: LedgerPeer(uid: 1000, pid: 4242, comm: "tester"), authLevel: 1)
        await #expect {
            try await store.appendLedger([long])
        } throws: { error in
            (error as? DatabaseError)?.resultCode == .SQLITE_TOOBIG
        }
        #expect(try await store.ledgerCount() == 0)
        let stored = try await store.appendLedger(ledgerBatch(1..<3))
        #expect(stored.map(\.seq) == [1, 2])
        #expect(try await store.ledgerEntries(afterSeq: 0, limit: 10) == stored)
        #expect(try await store.auditLedger().ok)
        try await store.close()
    }

    @Test func reopeningTheStoreContinuesTheChain() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        let first = try directory.open()
        let before = try await first.appendLedger(ledgerBatch(1..<4))
        try await first.close()

        let second = try directory.open()
        #expect(try await second.ledgerCount() == 3)
        let after = try await second.appendLedger(ledgerBatch(4..<6))
        #expect(after.map(\.seq) == [4, 5])
        #expect(after.first?.prevHash == before.last?.entryHash)
        #expect(try await second.auditLedger() == LedgerAudit(ok: true, entries: 5, firstBadSeq: nil))
        try await second.close()
    }

    @Test func appendsThroughAnotherConnectionAreNoticed() async throws {
        // Two stores on one file stand for two processes: each must pick up the other's
        // rows instead of trusting its cached tail.
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        let one = try directory.open()
        let two = try directory.open()
        _ = try await one.appendLedger(ledgerBatch(1..<3))
        _ = try await two.appendLedger(ledgerBatch(3..<5))
        let last = try await one.appendLedger(ledgerBatch(5..<7))
        #expect(last.map(\.seq) == [5, 6])
        #expect(try await two.auditLedger() == LedgerAudit(ok: true, entries: 6, firstBadSeq: nil))
        try await one.close()
        try await two.close()
    }

    @Test(arguments: StoreBackend.allCases)
    func pagingReturnsEntriesAfterASequenceNumberInOrder(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            _ = try await store.appendLedger(ledgerBatch(1..<11))
            #expect(try await store.ledgerEntries(afterSeq: 0, limit: 4).map(\.seq) == [1, 2, 3, 4])
            #expect(try await store.ledgerEntries(afterSeq: 4, limit: 4).map(\.seq) == [5, 6, 7, 8])
            #expect(try await store.ledgerEntries(afterSeq: 8, limit: 4).map(\.seq) == [9, 10])
            #expect(try await store.ledgerEntries(afterSeq: 10, limit: 4).isEmpty)
            #expect(try await store.ledgerEntries(afterSeq: 0, limit: 0).isEmpty)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aDuplicateSignatureIdRejectsTheWholeBatch(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            _ = try await store.appendLedger(ledgerBatch(1..<3))
            let batch = [ledgerAppend(3), ledgerAppend(1)]
            await #expect(throws: StorageError.duplicateSignatureID(ledgerAppend(1).signatureID)) {
                try await store.appendLedger(batch)
            }
            #expect(try await store.ledgerCount() == 2)
            let next = try await store.appendLedger([ledgerAppend(3)])
            #expect(next.map(\.seq) == [3])
            #expect(try await store.auditLedger().ok)
        }
    }

    @Test("in a batch of many entries, the one whose signature ID is stored already, or repeated in the batch, is named and nothing is stored",
          arguments: StoreBackend.allCases)
    func aDuplicateDeepInALargeBatchIsNamed(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            _ = try await store.appendLedger(ledgerBatch(1..<3))
            // 13 entries: the 11th is entry 2 again (stored already).
            var batch = ledgerBatch(3..<16)
            batch[10] = ledgerAppend(2)
            await #expect(throws: StorageError.duplicateSignatureID(ledgerAppend(2).signatureID)) {
                try await store.appendLedger(batch)
            }
            // 20 entries, the last repeating the 17th of the batch.
            var repeated = ledgerBatch(3..<23)
            repeated[19] = ledgerAppend(19)
            await #expect(throws: StorageError.duplicateSignatureID(ledgerAppend(19).signatureID)) {
                try await store.appendLedger(repeated)
            }
            #expect(try await store.ledgerCount() == 2)
            let next = try await store.appendLedger(ledgerBatch(3..<40))
            #expect(next.map(\.seq) == Array(3...39))
            #expect(try await store.auditLedger().ok)
            try await MerkleLogTests.expectTreeMatches(store)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func concurrentAppendsGetDistinctConsecutiveSequenceNumbers(_ backend: StoreBackend) async throws {
        try await withStores(backend, count: 2) { stores in
            let store = stores[0]
            try await withThrowingTaskGroup(of: [LedgerEntry].self) { group in
                for task in 0..<8 {
                    let store = stores[task % 2]
                    group.addTask { try await store.appendLedger(ledgerBatch(task * 50..<(task + 1) * 50)) }
                }
                var seqs: [Int64] = []
                for try await entries in group {
                    seqs += entries.map(\.seq)
                }
                #expect(seqs.sorted() == Array(1...400))
            }
            #expect(try await store.auditLedger() == LedgerAudit(ok: true, entries: 400, firstBadSeq: nil))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func twentyThousandRowsInBatchesOfAHundredStayContinuousAndAuditOk(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            let total = 20_000
            var expectedSeq: Int64 = 1
            for start in stride(from: 0, to: total, by: 100) {
                let entries = try await store.appendLedger(ledgerBatch(start..<start + 100))
                for entry in entries {
                    #expect(entry.seq == expectedSeq)
                    expectedSeq += 1
                }
            }
            #expect(try await store.ledgerCount() == Int64(total))
            #expect(try await store.auditLedger() == LedgerAudit(ok: true, entries: total, firstBadSeq: nil))
            let page = try await store.ledgerEntries(afterSeq: Int64(total) - 2, limit: 10)
            #expect(page.map(\.seq) == [Int64(total) - 1, Int64(total)])
        }
    }
}
