import Logging
import Metrics
import Prometheus
import StepSignConfig
import StepSignMetricsServer
import StepSignServer

extension StepSignDaemon {
    /// Bootstraps swift-metrics on a Prometheus registry when `[metrics] listen` is set (once
    /// per process; a reload does not change it), and returns the registry; nil when off.
    static func bootstrapMetrics(_ settings: StepSignConfiguration.Metrics) -> PrometheusCollectorRegistry? {
        guard settings.listen != .off else { return nil }
        let factory = StepSignMetricsFactory()
        MetricsSystem.bootstrap(factory)
        return factory.registry
    }

    /// Binds the metrics endpoint now, before the service group runs: a Unix socket gets mode
    /// 0660 and `server.socket_group`, as the daemon's own socket does; a loopback port is
    /// taken as configured.
    static func bindMetrics(_ settings: StepSignConfiguration, registry: PrometheusCollectorRegistry?,
                            logger: Logger) async throws -> MetricsHTTPServer? {
        guard let registry else { return nil }
        switch settings.metrics.listen {
        case .off:
            return nil
        case let .unix(path):
            let server: MetricsHTTPServer
            do {
                server = try await SocketFileOwnership.binding(mode: 0o660) {
                    try await MetricsHTTPServer.bind(.unix(path: path), registry: registry, logger: logger)
                }
            } catch {
                throw ServerError.binding(error, address: path, role: "metrics.listen")
            }
            try SocketServer.setPermissions(path: path, mode: 0o660, group: settings.server.socketGroup)
            return server
        case let .loopback(host, port):
            do {
                return try await MetricsHTTPServer.bind(.tcp(host: host, port: port), registry: registry, logger: logger)
            } catch {
                throw ServerError.binding(error, address: "\(host):\(port)", role: "metrics.listen")
            }
        }
    }
}
