import Foundation
import StepSignFormat
import Testing
@testable import StepSignStorage

/// Someone with write access to the file edits the ledger with raw SQL (first dropping the
/// append-only triggers); the audit must point at the first broken entry.
@Suite struct LedgerTamperTests {
    /// A chain-only audit that stops at `seq` after reading `entries` rows.
    func broken(entries: Int, seq: Int64) -> LedgerAudit {
        LedgerAudit(ok: false, entries: entries, firstBadSeq: seq,
                    problem: "the hash chain breaks (changed, removed, inserted or reordered entry)")
    }

    func tampered(_ sql: String) async throws -> LedgerAudit {
        try await withStore { store, _ async throws in
            _ = try await store.appendLedger(ledgerBatch(1..<11))
            try await store.executeRawSQL("""
                DROP TRIGGER ledger_no_update;
                DROP TRIGGER ledger_no_delete;
                \(sql)
                """)
            return try await store.auditLedger()
        }
    }

    @Test func theLedgerRefusesUpdatesAndDeletesThroughSQL() async throws {
        try await withStore { store, _ async throws in
            _ = try await store.appendLedger(ledgerBatch(1..<3))
            await #expect(throws: (any Error).self) {
                try await store.executeRawSQL("UPDATE ledger SET jws = 'x' WHERE seq = 1")
            }
            await #expect(throws: (any Error).self) {
                try await store.executeRawSQL("DELETE FROM ledger WHERE seq = 2")
            }
            #expect(try await store.auditLedger().ok)
        }
    }

    @Test func aChangedJwsBreaksTheChainAtThatEntry() async throws {
        let audit = try await tampered("UPDATE ledger SET jws = jws || 'x' WHERE seq = 4")
        #expect(audit == broken(entries: 4, seq: 4))
    }

    @Test func aChangedHashBreaksTheChainAtThatEntry() async throws {
        let audit = try await tampered("UPDATE ledger SET entry_hash = zeroblob(32) WHERE seq = 6")
        #expect(audit.firstBadSeq == 6)
        #expect(!audit.ok)
    }

    @Test func aDeletedEntryBreaksTheChainAtItsSequenceNumber() async throws {
        let audit = try await tampered("DELETE FROM ledger WHERE seq = 7")
        #expect(audit == broken(entries: 7, seq: 7))
    }

    @Test func aDeletedLastEntryIsNotDetectableByTheChainAlone() async throws {
        // Truncating the tail leaves a valid, shorter chain; exported copies and the
        // count reported elsewhere are what reveal it.
        let audit = try await tampered("DELETE FROM ledger WHERE seq = 10")
        #expect(audit == LedgerAudit(ok: true, entries: 9, firstBadSeq: nil))
    }

    @Test func twoEntriesWithSwappedSequenceNumbersBreakTheChainAtTheFirst() async throws {
        let audit = try await tampered("""
            UPDATE ledger SET seq = 1000 WHERE seq = 3;
            UPDATE ledger SET seq = 3 WHERE seq = 5;
            UPDATE ledger SET seq = 5 WHERE seq = 1000;
            """)
        #expect(audit == broken(entries: 3, seq: 3))
    }

    @Test func anInsertedEntryBreaksTheChain() async throws {
        let audit = try await tampered("""
            UPDATE ledger SET seq = seq + 1000 WHERE seq >= 5;
            UPDATE ledger SET seq = seq - 999 WHERE seq >= 1005;
            INSERT INTO ledger (seq, signature_id, user_name, iat, kid, jws, prev_hash, entry_hash,
                peer_uid, peer_pid, peer_comm, auth_level, created_at)
            SELECT 5, 'forged', user_name, iat, kid, 'forged.jws.x', entry_hash, zeroblob(32),
                peer_uid, peer_pid, peer_comm, auth_level, created_at FROM ledger WHERE seq = 4;
            """)
        #expect(audit == broken(entries: 5, seq: 5))
    }
}
