#if canImport(Glibc)
import Glibc
#endif
import Logging
import StepSignCrypto

/// Sends each record to journald over its native protocol (`/run/systemd/journal/socket`,
/// systemd's "Native Journal Protocol") when the daemon's stderr is the journal, so that
/// `journalctl -o json MESSAGE_ID=… STEPSIGN_SIGNATURE_ID=…` finds a signature's line:
///
/// - `MESSAGE`: the logfmt line ``LogfmtLogHandler`` writes (what `journalctl` shows, as before);
/// - `PRIORITY`: syslog's 7 (debug, trace) … 2 (critical);
/// - `SYSLOG_IDENTIFIER`: `stepsignd`;
/// - `MESSAGE_ID`: one per kind of line, the first 128 bits of SHA-256 of `stepsign/` and the
///   line's `msg`, as 32 lowercase hex digits (``messageID(of:)``; docs/operations list them);
/// - `STEPSIGN_<KEY>` for each metadata key, camelCase made SNAKE_CASE (`signatureID` →
///   `STEPSIGN_SIGNATURE_ID`, `user` → `STEPSIGN_USER`).
///
/// A value with a newline (a checkpoint's note) is sent in the protocol's binary form. A record
/// that cannot be sent (the journal gone) is written as the logfmt line on stderr instead.
struct JournalLogHandler: LogHandler {
    let label: String
    let journal: JournalSocket
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = LogfmtLogHandler.metadata(of: event, over: metadata)
        let message = event.message.description
        var line = LogfmtLogHandler.line(level: event.level, message: message, metadata: merged, at: LogfmtLogHandler.now())
        let datagram = Self.datagram(line: line.dropLast(), level: event.level, message: message, metadata: merged)
        if !journal.send(datagram) {
            _ = line.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
        }
    }

    /// The record's fields in the native protocol.
    static func datagram(line: some Collection<UInt8>, level: Logger.Level, message: String,
                         metadata: Logger.Metadata) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(line.count + 256 + 64 * metadata.count)
        append("MESSAGE", line, to: &out)
        append("PRIORITY", Array(String(priority(level)).utf8), to: &out)
        append("SYSLOG_IDENTIFIER", Array("stepsignd".utf8), to: &out)
        append("MESSAGE_ID", Array(messageID(of: message).utf8), to: &out)
        for key in metadata.keys.sorted() {
            guard let name = fieldName(key) else { continue }
            append(name, Array((metadata[key]?.description ?? "").utf8), to: &out)
        }
        return out
    }

    /// `FIELD=value\n`, or for a value with a newline `FIELD\n`, its length as 64-bit little
    /// endian, the value, `\n`.
    static func append(_ field: String, _ value: some Collection<UInt8>, to out: inout [UInt8]) {
        out.append(contentsOf: field.utf8)
        if value.contains(0x0A) {
            out.append(0x0A)
            var length = UInt64(value.count).littleEndian
            withUnsafeBytes(of: &length) { out.append(contentsOf: $0) }
            out.append(contentsOf: value)
        } else {
            out.append(UInt8(ascii: "="))
            out.append(contentsOf: value)
        }
        out.append(0x0A)
    }

    /// syslog's priority of `level`.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// The `MESSAGE_ID` of lines whose `msg` is `message`: the first 16 bytes of
    /// SHA-256("stepsign/" + message), lowercase hex.
    static func messageID(of message: String) -> String {
        Hex.encode(SHA256.hash(Array(("stepsign/" + message).utf8)).prefix(16))
    }

    /// `STEPSIGN_` and `key` in upper snake case (`signatureID` → `SIGNATURE_ID`, `peerUID` →
    /// `PEER_UID`); nil for a key that would not make a journal field name.
    static func fieldName(_ key: String) -> String? {
        var name = "STEPSIGN_"
        let scalars = Array(key.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            guard scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_" else {
                return nil
            }
            let upper = scalar.properties.isUppercase
            if upper, index > 0 {
                let previous = scalars[index - 1]
                let next = index + 1 < scalars.count ? scalars[index + 1] : nil
                // A word starts at an upper-case letter after a lower-case one, or at the last
                // capital of a run followed by a lower-case letter (`peerUID`, `UIDValue`).
                if previous.properties.isLowercase || (previous.properties.isUppercase && next?.properties.isLowercase == true) {
                    name.append("_")
                }
            }
            name.append(String(scalar).uppercased())
        }
        return name.count > 9 && name.count <= 64 ? name : nil
    }
}

/// A datagram socket to journald's native socket, one for the process.
final class JournalSocket: Sendable {
    static let path = "/run/systemd/journal/socket"
    private let fd: Int32
    private let path: String

    init?(path: String = JournalSocket.path) {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        self.fd = fd
        self.path = path
    }

    deinit { close(fd) }

    /// Sends one record; false when it could not be sent.
    func send(_ datagram: [UInt8]) -> Bool {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return datagram.withUnsafeBytes { body in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    sendto(fd, body.baseAddress, body.count, Int32(MSG_NOSIGNAL), socketAddress,
                           socklen_t(MemoryLayout<sockaddr_un>.size)) == body.count
                }
            }
        }
    }

    /// Whether the daemon's stderr is the journal: `$JOURNAL_STREAM` (`device:inode`, set by
    /// systemd for `StandardError=journal`) names the file stderr is.
    static func stderrIsTheJournal(environment: [String: String]) -> Bool {
        guard let stream = environment["JOURNAL_STREAM"] else { return false }
        let parts = stream.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(2, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }
}
