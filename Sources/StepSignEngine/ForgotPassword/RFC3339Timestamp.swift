#if canImport(Glibc)
import Glibc
#endif
import struct Foundation.Date

/// Instants as RFC 3339 text in UTC with whole seconds, e.g. `2025-06-01T12:34:56Z`.
///
/// Fractions of a second are dropped (rounded toward the past), so a time told to a person
/// is never later than the real one: a code said to expire at 12:34:56 expires at or after it.
enum RFC3339Timestamp {
    /// `date` as `YYYY-MM-DDThh:mm:ssZ`.
    static func string(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))Z"
    }
}
