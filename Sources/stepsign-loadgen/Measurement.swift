#if canImport(Glibc)
import Glibc
#endif

/// The monotonic clock, in nanoseconds.
@inline(__always) func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// This process's user and system CPU time so far (getrusage), in seconds.
func cpuSeconds() -> (user: Double, system: Double) {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return (Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6,
            Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6)
}

/// The `p` quantile of sorted nanosecond latencies, in milliseconds.
func percentile(_ sorted: [UInt64], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    let index = min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)
    return Double(sorted[max(0, index)]) / 1e6
}

/// `value` rounded to `digits` decimals, as the result line prints it.
func fmt(_ value: Double, _ digits: Int = 3) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    return String(rounded)
}

/// The run's start, for the client's own CPU and wall time on the result line.
struct RunClock {
    let cpuStart = cpuSeconds()
    let wallStart = monotonicNanoseconds()

    /// Prints the one result line: `fields` as `key=value`, then the client's CPU time, so that
    /// a slow client is not mistaken for a slow server.
    func report(_ fields: [(String, String)]) {
        let cpu = cpuSeconds()
        let wall = Double(monotonicNanoseconds() - wallStart) / 1e9
        let user = cpu.user - cpuStart.user
        let system = cpu.system - cpuStart.system
        var all = fields
        all.append(("client_cpu_user_s", fmt(user)))
        all.append(("client_cpu_sys_s", fmt(system)))
        all.append(("client_cpu_pct", fmt((user + system) / max(wall, 1e-9) * 100, 1)))
        print(all.map { "\($0.0)=\($0.1)" }.joined(separator: " "))
    }
}
