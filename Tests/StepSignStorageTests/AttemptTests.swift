import Foundation
import Testing
@testable import StepSignStorage

@Suite struct AttemptTests {
    @Test func failedAttemptsCountDownAndBlockUntilAdminUnlockAtTheMaximum() async throws {
        try await withStore { store, _ async throws in
            try await store.addUser(newUser("alice"))
            let first = try #require(try await store.recordFailedAttempt(user: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch))
            #expect(first == AttemptOutcome(failedAttempts: 1, attemptsLeft: 2, blocked: false, blockedUntil: nil))
            let second = try #require(try await store.recordFailedAttempt(user: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch))
            #expect(second.attemptsLeft == 1)
            #expect(!second.blocked)
            let third = try #require(try await store.recordFailedAttempt(user: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch))
            #expect(third == AttemptOutcome(failedAttempts: 3, attemptsLeft: 0, blocked: true, blockedUntil: nil))

            let alice = try #require(try await store.user(named: "alice"))
            #expect(alice.blocked)
            #expect(alice.blockedUntil == nil)
            #expect(alice.isBlocked(at: epoch.addingTimeInterval(365 * 86400)))
            #expect(alice.attemptsLeft(maxAttempts: 3, at: epoch) == 0)
        }
    }

    @Test func aBlockedUserStaysBlockedAndUnchangedOnFurtherFailures() async throws {
        try await withStore { store, _ async throws in
            try await store.addUser(newUser("alice"))
            for _ in 0..<3 {
                _ = try await store.recordFailedAttempt(user: "alice", maxAttempts: 3, blockSeconds: 60, now: epoch)
            }
            let again = try #require(try await store.recordFailedAttempt(user: "alice", maxAttempts: 3, blockSeconds: 60, now: epoch.addingTimeInterval(10)))
            #expect(again.blocked)
            #expect(again.attemptsLeft == 0)
            #expect(again.blockedUntil == epoch.addingTimeInterval(60))
        }
    }

    @Test func aTemporaryBlockEndsAtBlockedUntilAndTheCountStartsOver() async throws {
        try await withStore { store, _ async throws in
            try await store.addUser(newUser("alice"))
            var outcome: AttemptOutcome?
            for _ in 0..<3 {
                outcome = try await store.recordFailedAttempt(user: "alice", maxAttempts: 3, blockSeconds: 300, now: epoch)
            }
            #expect(outcome?.blockedUntil == epoch.addingTimeInterval(300))

            let alice = try #require(try await store.user(named: "alice"))
            #expect(alice.isBlocked(at: epoch.addingTimeInterval(299)))
            #expect(!alice.isBlocked(at: epoch.addingTimeInterval(300)))
            #expect(alice.attemptsLeft(maxAttempts: 3, at: epoch.addingTimeInterval(301)) == 3)

            let after = try #require(try await store.recordFailedAttempt(user: "alice", maxAttempts: 3, blockSeconds: 300, now: epoch.addingTimeInterval(301)))
            #expect(after == AttemptOutcome(failedAttempts: 1, attemptsLeft: 2, blocked: false, blockedUntil: nil))
        }
    }

    @Test func unlockingClearsTheBlockAndTheFailures() async throws {
        try await withStore { store, _ async throws in
            try await store.addUser(newUser("alice"))
            for _ in 0..<3 {
                _ = try await store.recordFailedAttempt(user: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch)
            }
            #expect(try await store.unlockUser(named: "alice"))
            let alice = try #require(try await store.user(named: "alice"))
            #expect(!alice.blocked)
            #expect(alice.blockedUntil == nil)
            #expect(alice.failedAttempts == 0)
            #expect(try await !store.unlockUser(named: "nobody"))
        }
    }

    @Test func aSuccessResetsFailuresButDoesNotLiftAnActiveBlock() async throws {
        try await withStore { store, _ async throws in
            try await store.addUser(newUser("alice"))
            try await store.addUser(newUser("bob"))
            _ = try await store.recordFailedAttempt(user: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch)
            _ = try await store.recordFailedAttempt(user: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch)
            try await store.recordSuccessfulAttempt(user: "alice", now: epoch)
            #expect(try await store.user(named: "alice")?.failedAttempts == 0)

            for _ in 0..<3 {
                _ = try await store.recordFailedAttempt(user: "bob", maxAttempts: 3, blockSeconds: 0, now: epoch)
            }
            try await store.recordSuccessfulAttempt(user: "bob", now: epoch)
            let bob = try #require(try await store.user(named: "bob"))
            #expect(bob.isBlocked(at: epoch))
            #expect(bob.failedAttempts == 3)
        }
    }

    @Test func anUnknownUserHasNoAttemptOutcome() async throws {
        try await withStore { store, _ async throws in
            let outcome = try await store.recordFailedAttempt(user: "nobody", maxAttempts: 3, blockSeconds: 0, now: epoch)
            #expect(outcome == nil)
        }
    }

    @Test func countersPersistAcrossClosingAndReopeningTheStore() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        let first = try directory.open()
        try await first.addUser(newUser("alice"))
        _ = try await first.recordFailedAttempt(user: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch)
        _ = try await first.recordFailedAttempt(user: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch)
        try await first.close()

        // Reconnecting does not give fresh attempts.
        let second = try directory.open()
        #expect(try await second.user(named: "alice")?.attemptsLeft(maxAttempts: 3, at: epoch) == 1)
        let last = try #require(try await second.recordFailedAttempt(user: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch))
        #expect(last.blocked)
        try await second.close()

        let third = try directory.open()
        #expect(try await third.user(named: "alice")?.isBlocked(at: epoch) == true)
        try await third.close()
    }
}
