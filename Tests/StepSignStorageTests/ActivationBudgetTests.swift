import Foundation
import Testing
@testable import StepSignStorage

/// SPEC §5.1: activation codes are limited per name and hour, wrong codes draw on one budget
/// that a new code does not refill, and a code is consumed once.
@Suite struct ActivationBudgetTests {
    func code(_ user: String, _ hash: String = "h", expiresAt: Date = epoch.addingTimeInterval(600)) -> ActivationCodeRecord {
        ActivationCodeRecord(user: user, codeHash: hash, verificationKey: "v", expiresAt: expiresAt)
    }

    @Test(arguments: StoreBackend.allCases)
    func atMostMaxCodesPerHourPerNameForUsersAndOtherNamesAlike(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.addUser(newUser("alice"))
            for name in ["alice", "nobody"] {
                for _ in 0..<5 {
                    #expect(try await store.issueActivationCode(code(name), maxCodesPerHour: 5, now: epoch)
                        == .issued(failedAttempts: 0, stored: name == "alice"))
                }
                #expect(try await store.issueActivationCode(code(name), maxCodesPerHour: 5, now: epoch.addingTimeInterval(3599)) == .limitReached)
                #expect(try await store.issueActivationCode(code(name), maxCodesPerHour: 5, now: epoch.addingTimeInterval(3601))
                    == .issued(failedAttempts: 0, stored: name == "alice"))
            }
            #expect(try await store.activationCode(user: "nobody") == nil)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aNewCodeDoesNotRefillTheWrongCodeBudget(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.addUser(newUser("alice"))
            _ = try await store.issueActivationCode(code("alice", "h1"), maxCodesPerHour: 5, now: epoch)
            #expect(try await store.reserveActivationAttempt(name: "alice", maxAttempts: 3, now: epoch) == .granted(attemptsLeft: 2))
            #expect(try await store.reserveActivationAttempt(name: "alice", maxAttempts: 3, now: epoch) == .granted(attemptsLeft: 1))
            #expect(try await store.issueActivationCode(code("alice", "h2"), maxCodesPerHour: 5, now: epoch.addingTimeInterval(10))
                == .issued(failedAttempts: 2, stored: true))
            #expect(try await store.reserveActivationAttempt(name: "alice", maxAttempts: 3, now: epoch) == .granted(attemptsLeft: 0))
            #expect(try await store.reserveActivationAttempt(name: "alice", maxAttempts: 3, now: epoch)
                == .denied(blockedUntil: epoch.addingTimeInterval(3600)))
            #expect(try await store.reserveActivationAttempt(name: "alice", maxAttempts: 3, now: epoch.addingTimeInterval(3600))
                == .granted(attemptsLeft: 2))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aCodeIsConsumedOnceWhileValidAndGivesTheBudgetBack(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.addUser(newUser("alice"))
            _ = try await store.issueActivationCode(code("alice", "h1"), maxCodesPerHour: 5, now: epoch)
            _ = try await store.reserveActivationAttempt(name: "alice", maxAttempts: 3, now: epoch)
            #expect(try await !store.consumeActivationCode(user: "alice", codeHash: "other", now: epoch))
            #expect(try await !store.consumeActivationCode(user: "alice", codeHash: "h1", now: epoch.addingTimeInterval(600)))
            #expect(try await store.consumeActivationCode(user: "alice", codeHash: "h1", now: epoch))
            #expect(try await !store.consumeActivationCode(user: "alice", codeHash: "h1", now: epoch))
            #expect(try await store.reserveActivationAttempt(name: "alice", maxAttempts: 3, now: epoch) == .granted(attemptsLeft: 2))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func ofConcurrentConsumersOfOneCodeExactlyOneWins(_ backend: StoreBackend) async throws {
        try await withStores(backend, count: 2) { stores in
            try await stores[0].addUser(newUser("alice"))
            _ = try await stores[1].issueActivationCode(code("alice", "h1"), maxCodesPerHour: 5, now: epoch)
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<20 {
                    let store = stores[index % 2]
                    group.addTask { try await store.consumeActivationCode(user: "alice", codeHash: "h1", now: epoch) }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 1)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func ofConcurrentWrongCodeReservationsExactlyMaxAttemptsAreGranted(_ backend: StoreBackend) async throws {
        try await withStores(backend, count: 2) { stores in
            try await stores[0].addUser(newUser("alice"))
            for name in ["alice", "nobody"] {
                let granted = try await withThrowingTaskGroup(of: AttemptReservation.self) { group in
                    for index in 0..<19 {
                        let store = stores[index % 2]
                        group.addTask { try await store.reserveActivationAttempt(name: name, maxAttempts: 3, now: epoch) }
                    }
                    return try await group.reduce(0) { count, reservation in
                        if case .granted = reservation { count + 1 } else { count }
                    }
                }
                #expect(granted == 3, "\(name)")
            }
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aValueIsUsedOnceUntilItExpires(_ backend: StoreBackend) async throws {
        try await withStores(backend, count: 2) { stores in
            let store = stores[0]
            let until = epoch.addingTimeInterval(60)
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<20 {
                    let store = stores[index % 2]
                    group.addTask { try await store.useOnce("nonce-1", expiresAt: until, now: epoch) }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 1)
            #expect(try await store.useOnce("nonce-2", expiresAt: until, now: epoch))
            #expect(try await !store.useOnce("nonce-1", expiresAt: until, now: epoch.addingTimeInterval(59)))
            // Past its expiry it is forgotten (nothing can accept it any more anyway).
            #expect(try await store.useOnce("nonce-1", expiresAt: epoch.addingTimeInterval(200), now: epoch.addingTimeInterval(61)))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aRehashReplacesOnlyTheExpectedHash(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.addUser(newUser("alice", hash: "old"))
            #expect(try await !store.rehashPassword(user: "alice", expected: "other", replacement: "new"))
            #expect(try await store.rehashPassword(user: "alice", expected: "old", replacement: "new"))
            #expect(try await store.user(named: "alice")?.passwordHash == "new")
            #expect(try await store.passwordHistory(user: "alice", limit: 5) == ["new"])
        }
    }
}
