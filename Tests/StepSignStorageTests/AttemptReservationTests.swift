import Foundation
import Testing
@testable import StepSignStorage

/// SPEC §5.1, issue 39: an answer's attempt is reserved before its check and settled after it
/// (given back if right, spent if wrong). Reservations in flight are kept apart from settled
/// failures, so a right answer that arrives while others are being checked waits for them
/// (``AttemptReservation/inFlight``) instead of being refused, and the limit on wrong answers
/// is unchanged. Each rule holds for a user and for a name that is not one, on both stores.
@Suite struct AttemptReservationTests {
    static let names = ["alice", "nobody"]

    /// A store with the user alice (and never a user "nobody").
    func withAlice(_ backend: StoreBackend, _ body: (any StepSignStore) async throws -> Void) async throws {
        try await withStore(backend) { store in
            try await store.addUser(newUser("alice"))
            try await body(store)
        }
    }

    func reserve(_ store: any StepSignStore, _ id: ReservationID, _ name: String, max: Int = 3, block: Int = 0,
                 at now: Date = epoch) async throws -> AttemptReservation {
        try await store.reserveAttempt(id, name: name, maxAttempts: max, blockSeconds: block, now: now)
    }

    func spend(_ store: any StepSignStore, _ id: ReservationID, _ name: String, max: Int = 3, block: Int = 0,
               at now: Date = epoch) async throws -> SpentAttempt {
        try await store.spendAttempt(id, name: name, maxAttempts: max, blockSeconds: block, now: now)
    }

    static func ids(_ count: Int) throws -> [ReservationID] { try (0..<count).map { _ in try ReservationID.random() } }

    @Test("attempts held by answers in flight make the next answer wait, not fail; a right one gives its attempt back",
          arguments: StoreBackend.allCases, names)
    func heldAttemptsMakeTheNextAnswerWait(_ backend: StoreBackend, name: String) async throws {
        try await withAlice(backend) { store in
            let id = try Self.ids(4)
            #expect(try await reserve(store, id[0], name) == .granted(attemptsLeft: 2))
            #expect(try await reserve(store, id[1], name) == .granted(attemptsLeft: 1))
            #expect(try await reserve(store, id[2], name) == .granted(attemptsLeft: 0))
            // Three checks in flight hold every attempt: the fourth answer waits, nothing is blocked.
            #expect(try await reserve(store, id[3], name) == .inFlight)
            #expect(try await reserve(store, id[3], name) == .inFlight)
            let counter = try await store.attemptCounter(name: name, now: epoch)
            #expect(counter == AttemptCounter(failedAttempts: 3, inFlight: 3))
            #expect(!counter.isBlocked(at: epoch))
            #expect(try await store.user(named: "alice")?.blocked == false)

            // One of them was right: its attempt is back, and the waiting answer gets it.
            try await store.giveBackAttempt(id[0], name: name, now: epoch)
            #expect(try await store.attemptCounter(name: name, now: epoch) == AttemptCounter(failedAttempts: 2, inFlight: 2))
            #expect(try await reserve(store, id[3], name) == .granted(attemptsLeft: 0))
            for held in id[1...] { try await store.giveBackAttempt(held, name: name, now: epoch) }
            #expect(try await store.attemptCounter(name: name, now: epoch) == AttemptCounter())
        }
    }

    @Test("wrong answers settle into failures; the one that uses the last attempt blocks, and answers that waited are denied",
          arguments: StoreBackend.allCases, names)
    func wrongAnswersSettleIntoFailuresAndTheLastOneBlocks(_ backend: StoreBackend, name: String) async throws {
        try await withAlice(backend) { store in
            let tokenBefore = try await store.user(named: "alice")?.credentialToken
            let id = try Self.ids(4)
            for held in id[0..<3] { _ = try await reserve(store, held, name, block: 60) }
            #expect(try await reserve(store, id[3], name, block: 60) == .inFlight)
            #expect(try await spend(store, id[0], name, block: 60) == .counted(attemptsLeft: 2))
            #expect(try await spend(store, id[1], name, block: 60) == .counted(attemptsLeft: 1))
            // The third is still in flight: it may be right, so the fourth still waits.
            #expect(try await reserve(store, id[3], name, block: 60) == .inFlight)
            #expect(try await spend(store, id[2], name, block: 60) == .blocked(byThisAnswer: true))
            // Settled failures alone use every attempt now: the waiting answer is denied, unchecked.
            #expect(try await reserve(store, id[3], name, block: 60) == .denied(blockedUntil: epoch.addingTimeInterval(60)))
            let counter = try await store.attemptCounter(name: name, now: epoch)
            #expect(counter.isBlocked(at: epoch) && counter.settledFailures == 3 && counter.inFlight == 0)
            if name == "alice" {
                let alice = try #require(try await store.user(named: "alice"))
                #expect(alice.blocked && alice.failedAttempts == 3)
                #expect(alice.credentialToken != tokenBefore, "the block ends alice's logins")
            }
        }
    }

    @Test("a success while other answers are in flight starts the count over and keeps their attempts held",
          arguments: StoreBackend.allCases, names)
    func aSuccessKeepsTheOthersInFlightCounted(_ backend: StoreBackend, name: String) async throws {
        try await withAlice(backend) { store in
            let id = try Self.ids(4)
            _ = try await reserve(store, id[0], name)
            #expect(try await spend(store, id[0], name) == .counted(attemptsLeft: 2))
            #expect(try await reserve(store, id[1], name) == .granted(attemptsLeft: 1))
            #expect(try await reserve(store, id[2], name) == .granted(attemptsLeft: 0))
            #expect(try await reserve(store, id[3], name) == .inFlight, "one failure and two in flight: 3 of 3")
            try await store.giveBackAttempt(id[1], name: name, now: epoch)
            // The failure is forgotten; the answer still in flight holds its attempt.
            #expect(try await store.attemptCounter(name: name, now: epoch) == AttemptCounter(failedAttempts: 1, inFlight: 1))
            #expect(try await reserve(store, id[3], name) == .granted(attemptsLeft: 1))
            #expect(try await spend(store, id[2], name) == .counted(attemptsLeft: 2))
            #expect(try await spend(store, id[3], name) == .counted(attemptsLeft: 1))
            #expect(try await store.attemptCounter(name: name, now: epoch) == AttemptCounter(failedAttempts: 2))
        }
    }

    /// What a daemon killed mid-check leaves: a reservation nobody settles. It holds its
    /// attempt until it expires, then counts as a failure (an attacker who could kill checks
    /// gets no free guesses); a success drops it.
    @Test("a reservation never settled holds its attempt until it expires, then counts as a failure",
          arguments: StoreBackend.allCases, names)
    func anUnsettledReservationCountsAsAFailureOnceExpired(_ backend: StoreBackend, name: String) async throws {
        try await withAlice(backend) { store in
            let id = try Self.ids(3)
            let expired = epoch.addingTimeInterval(AttemptReservation.lifetime + 1)
            #expect(try await reserve(store, id[0], name, max: 1) == .granted(attemptsLeft: 0))
            #expect(try await reserve(store, id[1], name, max: 1, at: epoch.addingTimeInterval(AttemptReservation.lifetime - 1))
                    == .inFlight)
            #expect(try await store.attemptCounter(name: name, now: expired) == AttemptCounter(failedAttempts: 1))
            // max_attempts 1: the expired reservation used the only attempt; the name is blocked from now.
            #expect(try await reserve(store, id[1], name, max: 1, at: expired) == .denied(blockedUntil: nil))
            #expect(try await store.attemptCounter(name: name, now: expired).isBlocked(at: expired))
            // With more attempts it is one failure among them.
            #expect(try await store.unlockUser(named: "alice") || name == "nobody")
            if name == "alice" {
                #expect(try await reserve(store, id[2], name, max: 3, at: expired) == .granted(attemptsLeft: 2))
                let later = expired.addingTimeInterval(AttemptReservation.lifetime + 1)
                #expect(try await store.attemptCounter(name: name, now: later).attemptsLeft(maxAttempts: 3, at: later) == 2)
            }
        }
    }

    @Test("an answer settled after its reservation expired is counted once; a right one still gives its attempt back",
          arguments: StoreBackend.allCases, names)
    func lateSettlements(_ backend: StoreBackend, name: String) async throws {
        try await withAlice(backend) { store in
            let id = try Self.ids(2)
            let late = epoch.addingTimeInterval(AttemptReservation.lifetime + 5)
            _ = try await reserve(store, id[0], name)
            _ = try await reserve(store, id[1], name)
            // Both expired: id[1], never settled by `late`, is a failure then; id[0] settles as one.
            #expect(try await spend(store, id[0], name, at: late) == .counted(attemptsLeft: 1))
            #expect(try await store.attemptCounter(name: name, now: late) == AttemptCounter(failedAttempts: 2))
            try await store.giveBackAttempt(id[1], name: name, now: late)
            #expect(try await store.attemptCounter(name: name, now: late) == AttemptCounter())
        }
    }

    @Test("an unlock forgets the reservations; an answer in flight then counts its failure anew", arguments: StoreBackend.allCases)
    func unlockForgetsReservations(_ backend: StoreBackend) async throws {
        try await withAlice(backend) { store in
            let id = try Self.ids(3)
            for held in id { _ = try await reserve(store, held, "alice") }
            #expect(try await store.unlockUser(named: "alice"))
            #expect(try await store.attemptCounter(name: "alice", now: epoch) == AttemptCounter())
            #expect(try await spend(store, id[0], "alice") == .counted(attemptsLeft: 2))
            #expect(try await store.attemptCounter(name: "alice", now: epoch) == AttemptCounter(failedAttempts: 1))
        }
    }

    /// The busy user at the store: sixteen answers at once on two daemons' stores, each asking
    /// again while it is told to wait, and each right. All are checked, none is denied.
    @Test("16 right answers at once over two stores all get their attempt, given back in turn", arguments: StoreBackend.allCases, names)
    func sixteenRightAnswersAllGetTheirTurn(_ backend: StoreBackend, name: String) async throws {
        try await withStores(backend, count: 2) { stores in
            try await stores[0].addUser(newUser("alice"))
            let outcomes = try await withThrowingTaskGroup(of: (granted: Bool, waits: Int).self) { group in
                for index in 0..<16 {
                    let store = stores[index % 2]
                    group.addTask {
                        let id = try ReservationID.random()
                        var waits = 0
                        while true {
                            switch try await store.reserveAttempt(id, name: name, maxAttempts: 3, blockSeconds: 0, now: epoch) {
                            case .granted:
                                try await Task.sleep(for: .milliseconds(2))   // the check
                                try await store.giveBackAttempt(id, name: name, now: epoch)
                                return (true, waits)
                            case .inFlight:
                                waits += 1
                                try await Task.sleep(for: .milliseconds(1))
                            case .denied, .unsealed:
                                return (false, waits)
                            }
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.allSatisfy { $0.granted }, "\(outcomes)")
            #expect(outcomes.contains { $0.waits > 0 }, "some answer found every attempt in flight")
            #expect(try await stores[1].attemptCounter(name: name, now: epoch) == AttemptCounter())
        }
    }

    /// The attack of issue #11 with the wait of issue 39: forty wrong answers at once on two
    /// daemons' stores, each asking again while it is told to wait. Exactly three are granted
    /// (so checked), every other one ends denied, and the name ends blocked.
    @Test("40 wrong answers at once over two stores: exactly max_attempts are checked, the rest denied once they settle",
          arguments: StoreBackend.allCases, names)
    func fortyWrongAnswersGetExactlyThreeChecks(_ backend: StoreBackend, name: String) async throws {
        try await withStores(backend, count: 2) { stores in
            try await stores[0].addUser(newUser("alice"))
            let outcomes = try await withThrowingTaskGroup(of: SpentAttempt?.self) { group in
                for index in 0..<40 {
                    let store = stores[index % 2]
                    group.addTask {
                        let id = try ReservationID.random()
                        while true {
                            switch try await store.reserveAttempt(id, name: name, maxAttempts: 3, blockSeconds: 0, now: epoch) {
                            case .granted:
                                try await Task.sleep(for: .milliseconds(2))   // the check: wrong
                                return try await store.spendAttempt(id, name: name, maxAttempts: 3, blockSeconds: 0, now: epoch)
                            case .inFlight:
                                try await Task.sleep(for: .milliseconds(1))
                            case .denied, .unsealed:
                                return nil
                            }
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let checked = outcomes.compactMap { $0 }
            #expect(checked.count == 3, "\(outcomes)")
            #expect(Set(checked.map { "\($0)" }) == ["counted(attemptsLeft: 2)", "counted(attemptsLeft: 1)",
                                                    "blocked(byThisAnswer: true)"])
            #expect(try await stores[1].attemptCounter(name: name, now: epoch).isBlocked(at: epoch))
        }
    }

    @Test("forty reservations at once over two stores: exactly max_attempts granted, every other one told to wait",
          arguments: StoreBackend.allCases, names)
    func fortyConcurrentReservations(_ backend: StoreBackend, name: String) async throws {
        try await withStores(backend, count: 2) { stores in
            try await stores[0].addUser(newUser("alice"))
            let results = try await withThrowingTaskGroup(of: AttemptReservation.self) { group in
                for index in 0..<40 {
                    let store = stores[index % 2]
                    group.addTask {
                        try await store.reserveAttempt(try ReservationID.random(), name: name, maxAttempts: 3, blockSeconds: 0,
                                                       now: epoch)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let granted = results.filter { if case .granted = $0 { true } else { false } }
            #expect(Set(granted.map { "\($0)" }) == ["granted(attemptsLeft: 2)", "granted(attemptsLeft: 1)",
                                                    "granted(attemptsLeft: 0)"])
            #expect(granted.count == 3)
            #expect(results.filter { $0 == .inFlight }.count == 37)
        }
    }

    @Test("a user added or removed while answers are in flight: their failures count on the name's counter as it is then",
          arguments: StoreBackend.allCases)
    func reservationsFollowTheNameAcrossAddAndRemove(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let id = try Self.ids(2)
            _ = try await reserve(store, id[0], "carol")
            try await store.addUser(newUser("carol"))
            #expect(try await spend(store, id[0], "carol") == .counted(attemptsLeft: 2))
            #expect(try await store.user(named: "carol")?.failedAttempts == 1)

            try await store.addUser(newUser("dave"))
            _ = try await reserve(store, id[1], "dave")
            #expect(try await store.removeUser(named: "dave"))
            #expect(try await store.attemptCounter(name: "dave", now: epoch) == AttemptCounter())
            #expect(try await spend(store, id[1], "dave") == .counted(attemptsLeft: 2))
            #expect(try await store.attemptCounter(name: "dave", now: epoch) == AttemptCounter(failedAttempts: 1))
        }
    }
}
