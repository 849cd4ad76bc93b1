import Foundation
import Testing
@testable import StepSignStorage

/// SPEC §4 and §5.1: attempt counters live in the store, are taken before an answer is
/// checked, and hold however many answers arrive at once.
@Suite struct AttemptTests {
    @Test(arguments: StoreBackend.allCases)
    func reservationsCountDownAndTheLastOneBlocksUntilAnAdminUnlocks(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.addUser(newUser("alice"))
            #expect(try await store.reserveAttempt(name: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch) == .granted(attemptsLeft: 2))
            #expect(try await store.reserveAttempt(name: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch) == .granted(attemptsLeft: 1))
            #expect(try await store.reserveAttempt(name: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch) == .granted(attemptsLeft: 0))
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
            for _ in 0..<3 {
                _ = try await store.reserveAttempt(name: "alice", maxAttempts: 3, blockSeconds: 300, now: epoch)
            }
            let until = epoch.addingTimeInterval(300)
            #expect(try await store.reserveAttempt(name: "alice", maxAttempts: 3, blockSeconds: 300,
                                                   now: epoch.addingTimeInterval(299)) == .denied(blockedUntil: until))
            #expect(try await store.attemptCounter(name: "alice", now: epoch).isBlocked(at: epoch.addingTimeInterval(299)))
            #expect(try await store.reserveAttempt(name: "alice", maxAttempts: 3, blockSeconds: 300,
                                                   now: epoch.addingTimeInterval(301)) == .granted(attemptsLeft: 2))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aRightAnswerGivesItsAttemptBackAndLiftsTheBlockItsReservationSet(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.addUser(newUser("alice"))
            for _ in 0..<3 {
                _ = try await store.reserveAttempt(name: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch)
            }
            // The third reservation blocked alice; its answer proves right.
            try await store.giveBackAttempt(name: "alice", now: epoch)
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
            for _ in 0..<3 {
                _ = try await store.reserveAttempt(name: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch)
            }
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
                var seen: [AttemptReservation] = []
                for _ in 0..<4 {
                    seen.append(try await store.reserveAttempt(name: name, maxAttempts: 3, blockSeconds: 60, now: epoch))
                }
                #expect(seen == [.granted(attemptsLeft: 2), .granted(attemptsLeft: 1), .granted(attemptsLeft: 0),
                                 .denied(blockedUntil: epoch.addingTimeInterval(60))], "\(name)")
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
        _ = try await first.reserveAttempt(name: "Tr0ub4dor&3", maxAttempts: 3, blockSeconds: 0, now: epoch)
        _ = try await first.reserveAttempt(name: "Tr0ub4dor&3", maxAttempts: 3, blockSeconds: 0, now: epoch)
        try await first.close()
        // What was typed into the user field (often a password by mistake) is not in the file.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + SQLiteStore.fileName))
        let wal = (try? Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + SQLiteStore.fileName + "-wal"))) ?? Data()
        #expect(bytes.range(of: Data("Tr0ub4dor".utf8)) == nil)
        #expect(wal.range(of: Data("Tr0ub4dor".utf8)) == nil)

        let second = try directory.open()
        #expect(try await second.reserveAttempt(name: "Tr0ub4dor&3", maxAttempts: 3, blockSeconds: 0, now: epoch) == .granted(attemptsLeft: 0))
        try await second.close()
    }

    @Test(arguments: StoreBackend.allCases)
    func countersOfNamesThatAreNotUsersArePrunedOnceIdlePastADayOrTheBlockTime(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            _ = try await store.reserveAttempt(name: "ghost", maxAttempts: 3, blockSeconds: 0, now: epoch)
            _ = try await store.reserveAttempt(name: "other", maxAttempts: 3, blockSeconds: 0, now: epoch.addingTimeInterval(86401))
            #expect(try await store.attemptCounter(name: "ghost", now: epoch.addingTimeInterval(86401)) == AttemptCounter())
            _ = try await store.reserveAttempt(name: "long", maxAttempts: 1, blockSeconds: 200_000, now: epoch)
            _ = try await store.reserveAttempt(name: "other", maxAttempts: 3, blockSeconds: 200_000, now: epoch.addingTimeInterval(100_000))
            #expect(try await store.attemptCounter(name: "long", now: epoch.addingTimeInterval(100_000)).blocked)
        }
    }

    /// The attack of issue #11: many answers at once. However many race, exactly
    /// `maxAttempts` are granted (so at most that many are ever checked) and the rest are denied.
    @Test(arguments: StoreBackend.allCases)
    func ofFortyConcurrentReservationsExactlyMaxAttemptsAreGranted(_ backend: StoreBackend) async throws {
        // Two stores stand for two daemons (on PostgreSQL: two pools on one database).
        try await withStores(backend, count: 2) { stores in
            try await stores[0].addUser(newUser("alice"))
            for name in ["alice", "nobody"] {
                let results = try await withThrowingTaskGroup(of: AttemptReservation.self) { group in
                    for index in 0..<40 {
                        let store = stores[index % 2]
                        group.addTask { try await store.reserveAttempt(name: name, maxAttempts: 3, blockSeconds: 0, now: epoch) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let granted = results.filter { if case .granted = $0 { true } else { false } }
                #expect(granted.count == 3, "\(name)")
                #expect(Set(granted.map { "\($0)" }).count == 3, "each attemptsLeft once: \(granted)")
                #expect(results.filter { $0 == .denied(blockedUntil: nil) }.count == 37, "\(name)")
            }
        }
    }

    @Test func countersPersistAcrossClosingAndReopeningTheStore() async throws {
        let directory = try TemporaryStateDirectory()
        defer { directory.cleanUp() }
        let first = try directory.open()
        try await first.addUser(newUser("alice"))
        _ = try await first.reserveAttempt(name: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch)
        _ = try await first.reserveAttempt(name: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch)
        try await first.close()

        // Reconnecting does not give fresh attempts; an answer in flight when the daemon died stays counted.
        let second = try directory.open()
        #expect(try await second.user(named: "alice")?.attemptsLeft(maxAttempts: 3, at: epoch) == 1)
        #expect(try await second.reserveAttempt(name: "alice", maxAttempts: 3, blockSeconds: 0, now: epoch) == .granted(attemptsLeft: 0))
        try await second.close()

        let third = try directory.open()
        #expect(try await third.user(named: "alice")?.isBlocked(at: epoch) == true)
        try await third.close()
    }
}
