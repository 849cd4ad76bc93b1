import Metrics

/// The daemon's metrics (issue 27): their names, help texts and labels, in one place. The
/// code that counts uses the swift-metrics API through the helpers below; with no metrics
/// system bootstrapped (`[metrics]` off, the tests) they cost an allocation and nothing more.
/// `StepSignMetricsServer` exposes them in Prometheus's text format.
public enum StepSignMetric: String, CaseIterable, Sendable {
    case signatures = "stepsign_signatures_total"
    case stepUps = "stepsign_stepup_answers_total"
    case refusals = "stepsign_refusals_total"
    case ledgerBatchEntries = "stepsign_ledger_batch_entries"
    case ledgerCommitSeconds = "stepsign_ledger_commit_duration_seconds"
    case checkpointTimestamp = "stepsign_log_checkpoint_timestamp_seconds"
    case treeSize = "stepsign_log_tree_size"
    case witnessedTreeSize = "stepsign_log_witnessed_tree_size"
    case connections = "stepsign_connections"
    case postgresPoolWaitSeconds = "stepsign_postgres_pool_wait_duration_seconds"

    /// The `# HELP` text.
    public var help: String {
        switch self {
        case .signatures: "Signatures made, by authLevel and the authenticator used."
        case .stepUps: "Step-up answers checked, by authenticator and outcome (success, wrong, blocked, must_replace)."
        case .refusals: "Requests refused, by the reply's error code (SPEC 3.3)."
        case .ledgerBatchEntries: "Entries per ledger transaction (group commit)."
        case .ledgerCommitSeconds: "Time to commit one ledger transaction durably."
        case .checkpointTimestamp: "Unix time of the last log checkpoint this daemon signed; its age is time() minus this."
        case .treeSize: "Size of the log at the last checkpoint this daemon signed."
        case .witnessedTreeSize: "Largest log size witnesses have cosigned; the lag is stepsign_log_tree_size minus this."
        case .connections: "Open client connections, by state (idle: waiting for a request; working: a request in work)."
        case .postgresPoolWaitSeconds: "Time a PostgreSQL operation waited for a connection from the pool."
        }
    }

    /// The buckets of a histogram (nil: not one).
    public var buckets: [Double]? {
        switch self {
        case .ledgerBatchEntries: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
        case .ledgerCommitSeconds, .postgresPoolWaitSeconds:
            [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
        default: nil
        }
    }
}

extension StepSignMetric {
    /// Adds `amount` to the counter with these labels.
    public func increment(by amount: Int = 1, _ dimensions: [(String, String)] = []) {
        Counter(label: rawValue, dimensions: dimensions).increment(by: amount)
    }

    /// Sets the gauge with these labels.
    public func set(_ value: Double, _ dimensions: [(String, String)] = []) {
        Gauge(label: rawValue, dimensions: dimensions).record(value)
    }

    /// Records one observation of the value histogram.
    public func observe(_ value: Double) {
        valueHistogram().observe(value)
    }

    /// Records one observation of the duration histogram.
    public func observe(_ duration: Duration) {
        durationHistogram().observe(duration)
    }
}

extension StepSignMetric {
    /// Adds `delta` (±) to the gauge with these labels (a count of things open now).
    public func adjust(by delta: Int, _ dimensions: [(String, String)] = []) {
        let meter = Meter(label: rawValue, dimensions: dimensions)
        if delta >= 0 { meter.increment(by: Double(delta)) } else { meter.decrement(by: Double(-delta)) }
    }
}

extension StepSignMetric {
    /// The gauge with these labels as a handle to keep, for a hot path (no lookup per use).
    /// Made after the metrics system is bootstrapped, it reports there; made before, nowhere.
    public func openCount(_ dimensions: [(String, String)] = []) -> OpenCount {
        OpenCount(meter: Meter(label: rawValue, dimensions: dimensions))
    }
}

/// A gauge of things open now, counted up and down.
public struct OpenCount: Sendable {
    fileprivate let meter: Meter

    public func increment() { meter.increment() }
    public func decrement() { meter.decrement() }
}

extension StepSignMetric {
    /// The value histogram as a handle to keep, for a hot path (no lookup per use). Made after
    /// the metrics system is bootstrapped, it reports there; made before, nowhere.
    public func valueHistogram() -> ValueHistogram {
        ValueHistogram(recorder: Recorder(label: rawValue, aggregate: true))
    }

    /// The duration histogram as a handle to keep, for a hot path (no lookup per use).
    public func durationHistogram() -> DurationHistogram {
        DurationHistogram(timer: Metrics.Timer(label: rawValue))
    }
}

/// A value histogram's handle (``StepSignMetric/valueHistogram()``).
public struct ValueHistogram: Sendable {
    fileprivate let recorder: Recorder

    public func observe(_ value: Double) { recorder.record(value) }
}

/// A duration histogram's handle (``StepSignMetric/durationHistogram()``).
public struct DurationHistogram: Sendable {
    fileprivate let timer: Metrics.Timer

    public func observe(_ duration: Duration) {
        timer.recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }
}
