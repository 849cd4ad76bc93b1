@testable import StepSignEngine
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
}
