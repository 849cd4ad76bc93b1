import Foundation
import Testing
@testable import StepSignStorage

/// SPEC §3, "Idempotent retries": a signing request's `idempotencyKey` is claimed in the store
/// in one atomic step, with the signature IDs it signs under. A repeat while the first is open
/// is in flight (14), with other parameters a mismatch (4), after it signed a replay of its
/// signatures; a claim whose signature is in the ledger is done even when its daemon died
/// before marking it, and a pending claim whose owner died stops blocking the key at its
/// `pendingUntil`. Each rule holds on both stores.
@Suite struct IdempotencyKeyTests {
    static let digest = Data(repeating: 0xA1, count: 32)
    static let otherDigest = Data(repeating: 0xB2, count: 32)

    /// A claim by uid 1000 of `key`, signing under the IDs of ``ledgerAppend(_:user:)`` `indexes`,
    /// pending for 5 minutes and remembered for a day from `now`.
    func claim(_ key: String = "retry-1", uid: Int64 = 1000, digest: Data = digest, indexes: [Int] = [1],
               at now: Date = epoch) -> IdempotencyClaim {
        IdempotencyClaim(peerUID: uid, key: key, digest: digest, signatureIDs: indexes.map { ledgerAppend($0).signatureID },
                         pendingUntil: now.addingTimeInterval(300), expiresAt: now.addingTimeInterval(86400))
    }

    @Test("a repeat while the first is open is in flight, with other parameters a mismatch, once done a replay",
          arguments: StoreBackend.allCases)
    func claimThenRepeat(_ backend: StoreBackend) async throws {
        try await withStore(backend) { (store: any StepSignStore) async throws in
            let first = claim(indexes: [1, 2])
            #expect(try await store.claimIdempotencyKey(first, now: epoch) == .claimed)
            let later = epoch.addingTimeInterval(10)
            #expect(try await store.claimIdempotencyKey(claim(indexes: [3, 4], at: later), now: later) == .inFlight)
            #expect(try await store.claimIdempotencyKey(claim(digest: Self.otherDigest, indexes: [5], at: later), now: later)
                == .mismatch)
            try await store.completeIdempotencyKey(first)
            #expect(try await store.claimIdempotencyKey(claim(indexes: [6, 7], at: later), now: later)
                == .replay(signatureIDs: first.signatureIDs))
            #expect(try await store.claimIdempotencyKey(claim(digest: Self.otherDigest, indexes: [8], at: later), now: later)
                == .mismatch)
        }
    }

    @Test("a claim whose signature is in the ledger is a replay, though its daemon died before marking it done",
          arguments: StoreBackend.allCases)
    func signedButNotMarked(_ backend: StoreBackend) async throws {
        try await withStore(backend) { (store: any StepSignStore) async throws in
            let first = claim()
            #expect(try await store.claimIdempotencyKey(first, now: epoch) == .claimed)
            _ = try await store.appendLedger([ledgerAppend(1)])
            // Within its pending time and long after it: never a second claim.
            #expect(try await store.claimIdempotencyKey(claim(indexes: [2]), now: epoch.addingTimeInterval(1))
                == .replay(signatureIDs: first.signatureIDs))
            let late = epoch.addingTimeInterval(3600)
            #expect(try await store.claimIdempotencyKey(claim(indexes: [3], at: late), now: late)
                == .replay(signatureIDs: first.signatureIDs))
            #expect(try await store.releaseIdempotencyKey(first) == false)
            #expect(try await store.claimIdempotencyKey(claim(indexes: [4], at: late), now: late)
                == .replay(signatureIDs: first.signatureIDs))
        }
    }

    @Test("a pending claim whose owner died or gave up no longer blocks its key", arguments: StoreBackend.allCases)
    func deadOrReleasedClaims(_ backend: StoreBackend) async throws {
        try await withStore(backend) { (store: any StepSignStore) async throws in
            let first = claim()
            #expect(try await store.claimIdempotencyKey(first, now: epoch) == .claimed)
            // Its pending time passed with nothing signed: the next repeat takes it over, under
            // the first one's signature IDs (a late signing of the first and this one cannot
            // both land: the ledger's signature IDs are unique).
            let late = epoch.addingTimeInterval(301)
            #expect(try await store.claimIdempotencyKey(claim(indexes: [2], at: late), now: late)
                == .takenOver(signatureIDs: first.signatureIDs))
            #expect(try await store.claimIdempotencyKey(claim(indexes: [3], at: late), now: late) == .inFlight)
            // Given up (a cancelled challenge): the next repeat takes it over at once, still
            // under the same IDs; other parameters stay a mismatch until the key expires.
            let second = claim(indexes: [2], at: late).signing(under: first.signatureIDs)
            #expect(try await store.releaseIdempotencyKey(second))
            #expect(try await store.claimIdempotencyKey(claim(digest: Self.otherDigest, indexes: [4], at: late), now: late)
                == .mismatch)
            #expect(try await store.claimIdempotencyKey(claim(indexes: [5], at: late), now: late)
                == .takenOver(signatureIDs: first.signatureIDs))
        }
    }

    @Test("keys are per peer uid and forgotten when they expire", arguments: StoreBackend.allCases)
    func perUIDAndExpiry(_ backend: StoreBackend) async throws {
        try await withStore(backend) { (store: any StepSignStore) async throws in
            let first = claim()
            #expect(try await store.claimIdempotencyKey(first, now: epoch) == .claimed)
            try await store.completeIdempotencyKey(first)
            #expect(try await store.claimIdempotencyKey(claim(uid: 1001, digest: Self.otherDigest, indexes: [2]), now: epoch)
                == .claimed)
            let expired = epoch.addingTimeInterval(86401)
            #expect(try await store.claimIdempotencyKey(claim(digest: Self.otherDigest, indexes: [3], at: expired), now: expired)
                == .claimed)
        }
    }

    @Test("many repeats at once on two daemons' stores: exactly one claims, the others are in flight",
          arguments: StoreBackend.allCases)
    func concurrentClaims(_ backend: StoreBackend) async throws {
        try await withStores(backend, count: 2) { stores in
            let outcomes = try await withThrowingTaskGroup(of: IdempotencyOutcome.self) { group in
                for index in 1...8 {
                    let store = stores[index % 2]
                    group.addTask { try await store.claimIdempotencyKey(claim(indexes: [index]), now: epoch) }
                }
                return try await group.reduce(into: [IdempotencyOutcome]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == .claimed }.count == 1)
            #expect(outcomes.filter { $0 == .inFlight }.count == 7)
        }
    }

    @Test("an idempotencyKey is 1 to 64 printable ASCII characters")
    func keyForm() {
        #expect(IdempotencyClaim.isValidKey("a"))
        #expect(IdempotencyClaim.isValidKey(String(repeating: "k", count: 64)))
        #expect(IdempotencyClaim.isValidKey("pay-2026/11 #7~"))
        #expect(!IdempotencyClaim.isValidKey(""))
        #expect(!IdempotencyClaim.isValidKey(String(repeating: "k", count: 65)))
        #expect(!IdempotencyClaim.isValidKey("tab\there"))
        #expect(!IdempotencyClaim.isValidKey("é"))
    }
}
