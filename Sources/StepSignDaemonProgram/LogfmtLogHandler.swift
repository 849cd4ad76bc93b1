#if canImport(Glibc)
import Glibc
#endif
import Logging
import StepSignProtocol

/// Writes each log record as one logfmt line on stderr, for journald:
/// `ts=… level=info msg="signed" user=alice signatureID=…`.
///
/// Values are quoted when they are empty or contain spaces, quotes, `=`, backslashes or
/// control characters; inside quotes they are escaped as JSON strings are (the protocol's
/// ``JSONString``, with DEL escaped too): `"` and `\` escaped, control characters written as
/// `\n`, `\r`, `\t` or `\u00XX`, so one record is always one line. Keys are
/// sorted. Each line goes out in one `write(2)`. Callers never pass secrets to the logger.
///
/// Built byte by byte into one buffer: one `signed` line is written per signature, so this
/// is on the signing hot path.
struct LogfmtLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    init(label: String) {
        self.label = label
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes `event` as one line. (The event API, not the older `log(level:message:…)`: that
    /// one would make swift-log compute `source` from the file name on every call.)
    func log(event: LogEvent) {
        var out = Self.line(level: event.level, message: event.message.description,
                            metadata: Self.metadata(of: event, over: metadata), at: Self.now())
        _ = out.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }

    /// The event's metadata over the handler's, with the event's error as `error` unless the
    /// metadata already has one.
    static func metadata(of event: LogEvent, over base: Logger.Metadata) -> Logger.Metadata {
        var merged = merge(base, event.metadata ?? [:])
        if let error = event.error, merged["error"] == nil {
            merged["error"] = .string("\(error)")
        }
        return merged
    }

    /// The handler's metadata with the call's on top (no copy when either is empty).
    private static func merge(_ base: Logger.Metadata, _ explicit: Logger.Metadata) -> Logger.Metadata {
        if base.isEmpty { return explicit }
        if explicit.isEmpty { return base }
        return base.merging(explicit) { $1 }
    }

    /// The whole line, newline included.
    static func line(level: Logger.Level, message: String, metadata: Logger.Metadata, at time: timespec) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128 + 64 * metadata.count)
        out.append(contentsOf: "ts=".utf8)
        appendTimestamp(time, to: &out)
        out.append(contentsOf: " level=".utf8)
        out.append(contentsOf: level.rawValue.utf8)
        out.append(contentsOf: " msg=".utf8)
        appendValue(message, to: &out)
        // Sorting the keys alone: sorting (key, value) pairs makes the runtime look up a tuple
        // type's metadata, under a lock, on every line.
        for key in metadata.keys.sorted() {
            out.append(UInt8(ascii: " "))
            out.append(contentsOf: key.utf8)
            out.append(UInt8(ascii: "="))
            appendValue(metadata[key]?.description ?? "", to: &out)
        }
        out.append(UInt8(ascii: "\n"))
        return out
    }

    /// Appends `value`, quoted and escaped only when it has to be.
    static func appendValue(_ value: String, to out: inout [UInt8]) {
        let utf8 = value.utf8
        let plain = !utf8.isEmpty && (utf8.withContiguousStorageIfAvailable { !$0.contains(where: needsQuoting) }
            ?? !utf8.contains(where: needsQuoting))
        guard !plain else {
            out.append(contentsOf: utf8)
            return
        }
        JSONString.append(value, to: &out, escapingDelete: true)
    }

    private static func needsQuoting(_ byte: UInt8) -> Bool {
        byte <= 0x20 || byte == 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "=")
            || byte == UInt8(ascii: "\\")
    }


    static func now() -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return now
    }

    /// `2026-11-21T12:43:04.123Z` (UTC, milliseconds).
    static func appendTimestamp(_ time: timespec, to out: inout [UInt8]) {
        var seconds = time.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        appendDigits(Int(parts.tm_year) + 1900, width: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        appendDigits(Int(parts.tm_mon) + 1, width: 2, to: &out)
        out.append(UInt8(ascii: "-"))
        appendDigits(Int(parts.tm_mday), width: 2, to: &out)
        out.append(UInt8(ascii: "T"))
        appendDigits(Int(parts.tm_hour), width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(Int(parts.tm_min), width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(Int(parts.tm_sec), width: 2, to: &out)
        out.append(UInt8(ascii: "."))
        appendDigits(time.tv_nsec / 1_000_000, width: 3, to: &out)
        out.append(UInt8(ascii: "Z"))
    }

    /// `value` in decimal, zero-padded to at least `width` digits (`value` ≥ 0).
    private static func appendDigits(_ value: Int, width: Int, to out: inout [UInt8]) {
        var digits: [UInt8] = []
        var rest = max(0, value)
        repeat {
            digits.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        for _ in digits.count..<max(width, digits.count) { out.append(UInt8(ascii: "0")) }
        out.append(contentsOf: digits.reversed())
    }
}
