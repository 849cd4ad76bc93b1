import Metrics
import Synchronization

/// `stepsign_signatures_total` by level and authenticator, each labelled counter made once and
/// kept (issue 43): a counter made per signature cost an array of labels, a string for the
/// level and the metrics factory's lookup. Made after the metrics system is bootstrapped, the
/// counters report there; made before, nowhere.
public final class SignatureCounters: Sendable {
    private struct Key: Hashable {
        var level: Int
        var authenticator: String
    }

    private let counters = Mutex<[Key: Counter]>([:])

    public init() {}

    /// Counts `amount` signatures at `level` by `authenticator`.
    public func increment(by amount: Int = 1, level: Int, authenticator: String) {
        let key = Key(level: level, authenticator: authenticator)
        let counter = counters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Counter(label: StepSignMetric.signatures.rawValue,
                                  dimensions: [("level", "\(level)"), ("authenticator", authenticator)])
            counters[key] = counter
            return counter
        }
        counter.increment(by: amount)
    }
}
