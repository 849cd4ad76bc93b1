import StepSignCrypto
import StepSignProtocol
import Testing

/// The all-or-none rule of batches (SPEC §3.4) checked on exported ledger entries: every batch
/// (the `batch` claim's `id`) has exactly `count` entries, indices 0…count−1, next to each
/// other in the ledger, whatever killed the daemon while it committed.
enum BatchCompleteness {
    struct Entry {
        var seq: Int
        var jws: String
    }

    /// The batches that are not whole and consecutive (empty when all are), and how many whole ones there were.
    static func check(_ entries: [Entry]) -> (broken: [String], whole: Int) {
        var byBatch: [String: [(seq: Int, index: Int, count: Int)]] = [:]
        for entry in entries {
            let parts = entry.jws.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3, let bytes = Base64URL.decode(String(parts[1])),
                  let batch = (try? JSONParser.parse(bytes))?["batch"],
                  let id = batch["id"]?.stringValue, let index = batch["index"]?.int, let count = batch["count"]?.int
            else { continue }
            byBatch[id, default: []].append((entry.seq, index, count))
        }
        var broken: [String] = []
        for (id, items) in byBatch {
            let sorted = items.sorted { $0.seq < $1.seq }
            let count = sorted[0].count
            let whole = sorted.count == count && sorted.map(\.index) == Array(0..<count)
                && sorted.last!.seq - sorted[0].seq == count - 1
            if !whole { broken.append("\(id): \(sorted.count) of \(count) entries") }
        }
        return (broken, byBatch.count)
    }
}
