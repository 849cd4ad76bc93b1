import CoreMetrics
import Prometheus
import StepSignMetrics

/// swift-metrics on swift-prometheus's registry, with the `# HELP` text and the buckets of
/// ``StepSignMetric`` (swift-prometheus's own factory gives no help text, which
/// `promtool check metrics` reports). A label not in the catalogue (a library's) gets a help
/// text that names it.
public struct StepSignMetricsFactory: MetricsFactory {
    public let registry: PrometheusCollectorRegistry

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
    }

    private func descriptor(_ label: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: label, unitName: "",
                             helpText: StepSignMetric(rawValue: label)?.help ?? "Reported by a library as \(label).")
    }

    private func buckets(_ label: String) -> [Double] {
        StepSignMetric(rawValue: label)?.buckets ?? [0.001, 0.01, 0.1, 1, 10]
    }

    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    public func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(descriptor: descriptor(label), labels: dimensions) }
        return registry.makeValueHistogram(descriptor: descriptor(label), labels: dimensions, buckets: buckets(label))
    }

    public func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        let buckets = buckets(label).map { Duration.nanoseconds(Int64($0 * 1_000_000_000)) }
        return registry.makeDurationHistogram(descriptor: descriptor(label), labels: dimensions, buckets: buckets)
    }

    // The daemon's metrics live as long as it does; a handler a library gives up stays
    // registered, as swift-prometheus's own factory keeps its families too.
    public func destroyCounter(_ handler: any CounterHandler) {}
    public func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    public func destroyRecorder(_ handler: any RecorderHandler) {}
    public func destroyMeter(_ handler: any MeterHandler) {}
    public func destroyTimer(_ handler: any TimerHandler) {}
}
