import Foundation
import Testing
@testable import StepSignStorage

@Suite struct PasswordHistoryTests {
    @Test(arguments: StoreBackend.allCases)
    func historyListsTheCurrentHashFirstThenEarlierOnesNewestFirst(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            try await store.addUser(newUser("alice", hash: "h0"))
            for index in 1...3 {
                try await store.setPassword(user: "alice", hash: "h\(index)", at: epoch.addingTimeInterval(Double(index)), historyLimit: 5)
            }
            #expect(try await store.passwordHistory(user: "alice", limit: 10) == ["h3", "h2", "h1", "h0"])
            #expect(try await store.passwordHistory(user: "alice", limit: 2) == ["h3", "h2"])
            #expect(try await store.passwordHistory(user: "alice", limit: 0) == [])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func historyIsTrimmedToTheLimitOfEarlierPasswords(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            try await store.addUser(newUser("alice", hash: "h0"))
            for index in 1...8 {
                try await store.setPassword(user: "alice", hash: "h\(index)", at: epoch, historyLimit: 3)
            }
            #expect(try await store.passwordHistory(user: "alice", limit: 100) == ["h8", "h7", "h6", "h5"])

            try await store.setPassword(user: "alice", hash: "h9", at: epoch, historyLimit: 0)
            #expect(try await store.passwordHistory(user: "alice", limit: 100) == ["h9"])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func historyIsPerUser(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            try await store.addUser(newUser("alice", hash: "a0"))
            try await store.addUser(newUser("bob", hash: "b0"))
            try await store.setPassword(user: "alice", hash: "a1", at: epoch, historyLimit: 5)
            try await store.setPassword(user: "bob", hash: "b1", at: epoch, historyLimit: 5)
            #expect(try await store.passwordHistory(user: "alice", limit: 10) == ["a1", "a0"])
            #expect(try await store.passwordHistory(user: "bob", limit: 10) == ["b1", "b0"])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func settingThePasswordOfAnUnknownUserThrowsNoSuchUser(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store async throws in
            await #expect(throws: StorageError.noSuchUser("nobody")) {
                try await store.setPassword(user: "nobody", hash: "h", at: epoch, historyLimit: 5)
            }
        }
    }
}
