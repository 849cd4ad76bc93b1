import Foundation
import Testing
@testable import StepSignStorage

/// SPEC §4 and §5.1: attempt counters live in the store, are taken before an answer is
/// checked, and hold however many answers arrive at once (the rules of answers in flight:
/// ``AttemptReservationTests``).
@Suite struct AttemptTests {
    @Test(arguments: StoreBackend.allCases)
    func wrongAnswersCountDownAndTheLastOneBlocksUntilAnAdminUnlocks(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.addUser(newUser("alice"))
            #expect(try await store.wrongAnswer("alice") == .counted(attemptsLeft: 2))
            #expect(try await store.wrongAnswer("alice") == .counted(attemptsLeft: 1))
            #expect(try await store.wrongAnswer("alice") == .blocked(byThisAnswer: true))
            #expect(try await store.reserveAttempt(name: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch) == .denied(blockedUntil: nil))

            let alice = try #require(try await store.user(named: "alice"))
            #expect(alice.blocked)
            #expect(alice.blockedUntil == nil)
            #expect(alice.isBlocked(at: epoch.addingTimeInterval(365 * 86400)))
            #expect(alice.failedAttempts == 3)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aTemporaryBlockEndsAtBlockedUntilAndTheCountStartsOver(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.addUser(newUser("alice"))
            for _ in 0..<3 { try await store.wrongAnswer("alice", blockSeconds: 300) }
            let until = epoch.addingTimeInterval(300)
            #expect(try await store.reserveAttempt(name: "alice", maxAttempts: 3, blockSeconds: 300,
                                                   now: epoch.addingTimeInterval(299)) == .denied(blockedUntil: until))
            #expect(try await store.attemptCounter(name: "alice", now: epoch).isBlocked(at: epoch.addingTimeInterval(299)))
            #expect(try await store.reserveAttempt(name: "alice", maxAttempts: 3, blockSeconds: 300,
                                                   now: epoch.addingTimeInterval(301)) == .granted(attemptsLeft: 2))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aRightAnswerGivesItsAttemptBackAndTheCountStartsOver(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.addUser(newUser("alice"))
            for _ in 0..<2 { try await store.wrongAnswer("alice") }
            // The third answer takes the last attempt and proves right.
            #expect(try await store.rightAnswer("alice") == .granted(attemptsLeft: 0))
            let alice = try #require(try await store.user(named: "alice"))
            #expect(!alice.blocked)
            #expect(alice.failedAttempts == 0)
            #expect(try await store.reserveAttempt(name: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch) == .granted(attemptsLeft: 2))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func unlockingClearsTheBlockAndTheFailures(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.addUser(newUser("alice"))
            for _ in 0..<3 { try await store.wrongAnswer("alice") }
            #expect(try await store.unlockUser(named: "alice"))
            #expect(try await store.attemptCounter(name: "alice", now: epoch) == AttemptCounter())
            #expect(try await !store.unlockUser(named: "nobody"))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aNameThatIsNotAUserIsCountedAndBlockedLikeAUser(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.addUser(newUser("alice"))
            for name in ["alice", "nobody"] {
                var seen: [SpentAttempt?] = []
                for _ in 0..<3 { seen.append(try await store.wrongAnswer(name, blockSeconds: 60)) }
                #expect(seen == [.counted(attemptsLeft: 2), .counted(attemptsLeft: 1), .blocked(byThisAnswer: true)], "\(name)")
                #expect(try await store.reserveAttempt(name: name, maxAttempts: 3, blockSeconds: 60, now: epoch)
                        == .denied(blockedUntil: epoch.addingTimeInterval(60)), "\(name)")
                #expect(try await store.attemptCounter(name: name, now: epoch).isBlocked(at: epoch), "\(name)")
                #expect(try await store.reserveAttempt(name: name, maxAttempts: 3, blockSeconds: 60,
                                                       now: epoch.addingTimeInterval(61)) == .granted(attemptsLeft: 2), "\(name)")
            }
        }
    }

    @Test func aNameThatIsNotAUserIsStoredOnlyAsAKeyedHashAndSurvivesAReopen() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        let first = try directory.open()
        try await first.wrongAnswer("Tr0ub4dor&3")
        try await first.wrongAnswer("Tr0ub4dor&3")
        // An answer still being checked: its reservation is stored under the keyed hash too.
        try await first.reserveAttempt(name: "Tr0ub4dor&3", maxAttempts: 3, blockSeconds: 0, now: epoch)
        try await first.close()
        // What was typed into the user field (often a password by mistake) is not in the file.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + SQLiteStore.fileName))
        let wal = (try? Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + SQLiteStore.fileName + "-wal"))) ?? Data()
        #expect(bytes.range(of: Data("Tr0ub4dor".utf8)) == nil)
        #expect(wal.range(of: Data("Tr0ub4dor".utf8)) == nil)

        let second = try directory.open()
        #expect(try await second.attemptCounter(name: "Tr0ub4dor&3", now: epoch) == AttemptCounter(failedAttempts: 3, inFlight: 1))
        #expect(try await second.reserveAttempt(name: "Tr0ub4dor&3", maxAttempts: 3, blockSeconds: 0, now: epoch) == .inFlight)
        try await second.close()
    }

    @Test(arguments: StoreBackend.allCases)
    func countersOfNamesThatAreNotUsersArePrunedOnceIdlePastADayOrTheBlockTime(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.wrongAnswer("ghost")
            try await store.wrongAnswer("other", now: epoch.addingTimeInterval(86401))
            #expect(try await store.attemptCounter(name: "ghost", now: epoch.addingTimeInterval(86401)) == AttemptCounter())
            try await store.wrongAnswer("long", maxAttempts: 1, blockSeconds: 200_000)
            try await store.wrongAnswer("other", blockSeconds: 200_000, now: epoch.addingTimeInterval(100_000))
            #expect(try await store.attemptCounter(name: "long", now: epoch.addingTimeInterval(100_000)).blocked)
        }
    }

    @Test func countersPersistAcrossClosingAndReopeningTheStore() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        let first = try directory.open()
        try await first.addUser(newUser("alice"))
        try await first.wrongAnswer("alice")
        // An answer in flight when the daemon died.
        try await first.reserveAttempt(name: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch)
        try await first.close()

        // Reconnecting does not give fresh attempts; the answer in flight stays counted (it
        // holds its attempt, then counts as a failure once its reservation expires).
        let second = try directory.open()
        #expect(try await second.user(named: "alice")?.attemptsLeft(maxAttempts: 3, at: epoch) == 1)
        #expect(try await second.attemptCounter(name: "alice", now: epoch) == AttemptCounter(failedAttempts: 2, inFlight: 1))
        #expect(try await second.wrongAnswer("alice", now: epoch.addingTimeInterval(AttemptReservation.lifetime))
                == .blocked(byThisAnswer: true))
        try await second.close()

        let third = try directory.open()
        #expect(try await third.user(named: "alice")?.isBlocked(at: epoch) == true)
        try await third.close()
    }
}
