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

    @Test("an ID inserted again (an idempotent retry's) is remembered from its newest insertion: it outlives capacity - 1 newer IDs after it")
    func insertedAgain() {
        var ids = RecentSignatureIDs()
        let capacity = RecentSignatureIDs.capacity
        ids.insert("a")
        for index in 0..<(capacity - 10) { ids.insert("id-\(index)") }
        ids.insert("a")
        for index in 0..<(capacity - 1) { ids.insert("later-\(index)") }
        #expect(ids.contains("a"))
        ids.insert("one more")
        #expect(!ids.contains("a"))
        #expect(ids.count == capacity)
    }

    @Test("before the ring is full and after it wraps, every remembered ID is found and no other", arguments: [1, 100, 4095, 4096, 4097, 6000, 8192, 9000])
    func foundAcrossTheWrap(inserted: Int) {
        var ids = RecentSignatureIDs()
        let capacity = RecentSignatureIDs.capacity
        for index in 0..<inserted { ids.insert("id-\(index)") }
        let kept = max(0, inserted - capacity)..<inserted
        // The edges of what is kept and of what is forgotten, and every 61st between.
        func sample(_ range: Range<Int>) -> [Int] {
            range.isEmpty ? [] : Array(Set(Array(range.prefix(3)) + Array(range.suffix(3)) + Array(stride(from: range.lowerBound, to: range.upperBound, by: 61))))
        }
        #expect(sample(kept).allSatisfy { ids.contains("id-\($0)") })
        #expect(sample(0..<kept.lowerBound).allSatisfy { !ids.contains("id-\($0)") })
        #expect(!ids.contains("id-\(inserted)"))
        #expect(ids.count == kept.count)
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
