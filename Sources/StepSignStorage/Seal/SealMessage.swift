import Foundation

/// The bytes a seal's HMAC is computed over: a domain string, then each field in a fixed order,
/// every variable-length field preceded by its length, so that no two records encode alike.
struct SealMessage {
    private(set) var bytes: [UInt8]

    init(domain: String) {
        bytes = []
        bytes.reserveCapacity(256)
        append(domain)
    }

    mutating func append(_ text: String) {
        append(Array(text.utf8))
    }

    mutating func append(_ data: some Collection<UInt8>) {
        append(Int64(data.count))
        bytes.append(contentsOf: data)
    }

    mutating func append(_ value: Int64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ flag: Bool) {
        bytes.append(flag ? 1 : 0)
    }

    /// A time as whole microseconds since 1970, rounded: the same for a time however it was
    /// read back (SQLite's REAL seconds, PostgreSQL's microseconds).
    mutating func append(_ date: Date) {
        append(Self.microseconds(date))
    }

    mutating func append(_ date: Date?) {
        append(date != nil)
        if let date { append(date) }
    }

    static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }
}
