@testable import StepSignEngine
import StepSignCrypto
import Foundation
import Testing

@Suite("A session's recent signature IDs")
struct RecentSignatureIDsTests {
    @Test("an ID the session made is remembered")
    func remembers() {
        var ids = RecentSignatureIDs()
        ids.insert("a")
        #expect(ids.contains("a"))
        #expect(!ids.contains("b"))
    }

    @Test("past capacity the oldest IDs are forgotten and the count stays at capacity")
    func forgetsTheOldest() {
        var ids = RecentSignatureIDs()
        let capacity = RecentSignatureIDs.capacity
        for index in 0..<(capacity + 10) { ids.insert("id-\(index)") }
        #expect(ids.count == capacity)
        #expect((0..<10).allSatisfy { !ids.contains("id-\($0)") })
        #expect((10..<(capacity + 10)).allSatisfy { ids.contains("id-\($0)") })
    }

    @Test("inserting an ID twice keeps one copy")
    func duplicates() {
        var ids = RecentSignatureIDs()
        ids.insert("a")
        ids.insert("a")
        #expect(ids.count == 1)
    }

    @Test("UUID IDs are kept by value: an ID is found by its exact text only, not by its upper case or a neighbour")
    func uuidsByValue() throws {
        var ids = RecentSignatureIDs()
        let made = try (0..<3).map { _ in try UUIDv7.generate(unixMilliseconds: 1_700_000_000_000) }
        for id in made { ids.insert(id) }
        #expect(made.allSatisfy { ids.contains($0) })
        #expect(!ids.contains(made[0].uppercased()))
        #expect(!ids.contains(String(made[0].dropLast()) + (made[0].last == "0" ? "1" : "0")))
        #expect(!ids.contains(made[0].replacingOccurrences(of: "-", with: "")))
        // Text that is not a UUID is kept as text, side by side.
        ids.insert("not-a-uuid")
        #expect(ids.contains("not-a-uuid"))
        #expect(ids.count == 4)
    }

    @Test("past capacity the oldest UUIDs are forgotten, in order")
    func forgetsTheOldestUUIDs() throws {
        var ids = RecentSignatureIDs()
        let capacity = RecentSignatureIDs.capacity
        let made = try (0..<(capacity + 5)).map { _ in try UUIDv7.generate(unixMilliseconds: 1_700_000_000_000) }
        for id in made { ids.insert(id) }
        #expect(ids.count == capacity)
        #expect(made.prefix(5).allSatisfy { !ids.contains($0) })
        #expect(made.dropFirst(5).allSatisfy { ids.contains($0) })
    }
}
