import Foundation
import Testing
@testable import StepSignStorage

@Suite struct UserTests {
    @Test(arguments: StoreBackend.allCases)
    func anAddedUserReadsBackWithFreshCounters(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            try await store.addUser(newUser("alice", hash: "scrypt$a", mustChange: true))
            let alice = try #require(try await store.user(named: "alice"))
            #expect(alice.name == "alice")
            #expect(alice.passwordHash == "scrypt$a")
            #expect(alice.mustChangePassword)
            #expect(!alice.passwordExpired)
            #expect(alice.failedAttempts == 0)
            #expect(!alice.blocked)
            #expect(alice.blockedUntil == nil)
            #expect(alice.createdAt == epoch)
            #expect(alice.passwordChangedAt == epoch)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func anUnknownUserIsNil(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            #expect(try await store.user(named: "nobody") == nil)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func addingAnExistingUserThrowsUserExists(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            try await store.addUser(newUser("alice"))
            await #expect(throws: StorageError.userExists("alice")) {
                try await store.addUser(newUser("alice", hash: "other"))
            }
            #expect(try await store.user(named: "alice")?.passwordHash == "scrypt$initial")
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aLookalikeOfAUserIsRefusedAndNamesAreComparedBytewise(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            try await store.addUser(newUser("alice"))
            try await store.addUser(newUser("jos\u{E9}"))
            try await store.addUser(newUser("stra\u{DF}e"))
            // Equal ignoring case, or canonically equivalent (SPEC §3): refused, whichever way.
            for (twin, existing) in [("Alice", "alice"), ("ALICE", "alice"), ("jose\u{301}", "jos\u{E9}"), ("JOS\u{C9}", "jos\u{E9}"),
                                     ("JOSE\u{301}", "jos\u{E9}"), ("STRASSE", "stra\u{DF}e"), ("strasse", "stra\u{DF}e")] {
                await #expect(throws: StorageError.userLookalike(twin, existing: existing)) {
                    try await store.addUser(newUser(twin))
                }
            }
            #expect(try await store.listUsers().map(\.name).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
                == ["alice", "jos\u{E9}", "stra\u{DF}e"])
            // Looked up byte-wise: another spelling finds no one.
            #expect(try await store.user(named: "ALICE") == nil)
            #expect(try await store.user(named: "jose\u{301}") == nil)
            #expect(try await store.user(named: "jos\u{E9}") != nil)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func lookalikesAddedAtOnceMakeOneUser(_ backend: StoreBackend) async throws {
        // Two stores on one database, as two daemons would add them.
        try await withStores(backend, count: 2) { stores async throws in
            let spellings = ["ren\u{E9}e", "rene\u{301}e", "REN\u{C9}E", "Ren\u{E9}e", "RENE\u{301}E", "ren\u{C9}e", "rEn\u{E9}E", "Rene\u{301}e"]
            let added = await withTaskGroup(of: Bool.self) { group in
                for (index, name) in spellings.enumerated() {
                    let store = stores[index % stores.count]
                    group.addTask { (try? await store.addUser(newUser(name))) != nil }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(added == 1)
            #expect(try await stores[0].listUsers().count == 1)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func usersAreListedSortedByName(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            for name in ["carol", "alice", "bob"] {
                try await store.addUser(newUser(name))
            }
            #expect(try await store.listUsers().map(\.name) == ["alice", "bob", "carol"])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func removingAUserRemovesTheirCredentialsButNotTheirLedgerRows(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            try await store.addUser(newUser("alice"))
            try await store.setPassword(user: "alice", hash: "scrypt$b", at: epoch, historyLimit: 5)
            try await store.addDeviceKey(DeviceKeyRecord(kid: "k1", user: "alice", publicKeyJWK: "{}", label: "phone", createdAt: epoch))
            try await store.putActivationCode(ActivationCodeRecord(user: "alice", codeHash: "h", verificationKey: "v", expiresAt: epoch))
            _ = try await store.appendLedger([ledgerAppend(1)])

            #expect(try await store.removeUser(named: "alice"))
            #expect(try await store.user(named: "alice") == nil)
            #expect(try await store.deviceKeys(user: "alice", includeRevoked: true).isEmpty)
            #expect(try await store.activationCode(user: "alice") == nil)
            #expect(try await store.passwordHistory(user: "alice", limit: 10).isEmpty)
            #expect(try await store.ledgerCount() == 1)

            // A new user of the same name starts clean.
            try await store.addUser(newUser("alice", hash: "scrypt$new"))
            #expect(try await store.passwordHistory(user: "alice", limit: 10) == ["scrypt$new"])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func removingAnUnknownUserReturnsFalse(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            #expect(try await !store.removeUser(named: "nobody"))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func expiringAPasswordSetsTheFlagAndANewPasswordClearsIt(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            try await store.addUser(newUser("alice", mustChange: true))
            #expect(try await store.expirePassword(named: "alice"))
            #expect(try await store.user(named: "alice")?.passwordExpired == true)

            let later = epoch.addingTimeInterval(60)
            try await store.setPassword(user: "alice", hash: "scrypt$b", at: later, historyLimit: 5)
            let alice = try #require(try await store.user(named: "alice"))
            #expect(!alice.passwordExpired)
            #expect(!alice.mustChangePassword)
            #expect(alice.passwordChangedAt == later)
            #expect(try await !store.expirePassword(named: "nobody"))
        }
    }
}
