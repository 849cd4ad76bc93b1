import Foundation
import Testing
@testable import StepSignStorage

/// SPEC §3: a login ends when the user's credentials change. The store keeps a random token per
/// user (``CredentialToken``) and makes a new one on every event after which no existing login
/// of the user may go on; the tests here hold every backend to that.
@Suite struct CredentialTokenTests {
    func token(_ store: any StepSignStore, _ name: String = "alice") async throws -> CredentialToken {
        try #require(try await store.user(named: name)).credentialToken
    }

    @Test(arguments: StoreBackend.allCases)
    func aNewUserHasARandomTokenOfItsOwn(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.addUser(newUser("alice"))
            try await store.addUser(newUser("bob"))
            let alice = try await token(store)
            #expect(alice.bytes.count == CredentialToken.byteCount)
            #expect(alice != (try await token(store, "bob")))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func setPasswordMakesANewTokenAndReturnsIt(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.addUser(newUser("alice"))
            let before = try await token(store)
            let returned = try await store.setPassword(user: "alice", hash: "scrypt$new", at: epoch, historyLimit: 5)
            #expect(returned != before)
            #expect(try await token(store) == returned)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func expirePasswordMakesANewToken(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.addUser(newUser("alice"))
            let before = try await token(store)
            #expect(try await store.expirePassword(named: "alice"))
            #expect(try await token(store) != before)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func theFailureThatBlocksMakesANewTokenAndAnUnlockKeepsIt(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.addUser(newUser("alice"))
            let before = try await token(store)
            for _ in 0..<2 { try await store.wrongAnswer("alice", blockSeconds: 300) }
            // An answer still being checked holds an attempt and blocks nothing.
            try await store.reserveAttempt(name: "alice", maxAttempts: 3, blockSeconds: 300, now: epoch)
            #expect(try await token(store) == before, "attempts that do not block change nothing")
            _ = try await store.unlockUser(named: "alice")
            for _ in 0..<3 { try await store.wrongAnswer("alice", blockSeconds: 300) }
            let blocked = try await token(store)
            #expect(blocked != before)
            // Neither the end of the block, nor an unlock, nor a right answer brings the old one back.
            #expect(try await store.rightAnswer("alice", blockSeconds: 300, now: epoch.addingTimeInterval(301)) != .inFlight)
            #expect(try await store.unlockUser(named: "alice"))
            #expect(try await token(store) == blocked)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aUserAddedAgainUnderTheSameNameHasANewToken(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.addUser(newUser("alice"))
            let old = try await token(store)
            #expect(try await store.removeUser(named: "alice"))
            try await store.addUser(newUser("alice"))
            #expect(try await token(store) != old)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func rehashingKeepsTheToken(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.addUser(newUser("alice", hash: "scrypt$old-parameters"))
            let before = try await token(store)
            #expect(try await store.rehashPassword(user: "alice", expected: "scrypt$old-parameters", replacement: "scrypt$new"))
            #expect(try await token(store) == before, "the same password with other parameters is no credential event")
        }
    }
}
