import Foundation
import Logging
import NIOConcurrencyHelpers

/// Where the tests' engines log: the file `$STEPSIGN_TEST_LOG` when it is set (scripts/test sets
/// it and shows the file only when a test fails, so a green run is not hundreds of daemon
/// lines), else standard error, as swift-log's default does for `swift test` by hand.
public enum TestLog {
    /// A logger labelled `label` that writes where the tests' logs go.
    public static func logger(_ label: String = "test") -> Logger {
        guard let file = shared else { return Logger(label: label) }
        return Logger(label: label) { label in FileLogHandler(label: label, file: file) }
    }

    /// The file of `$STEPSIGN_TEST_LOG`, opened once for appending; nil when it is not set.
    private static let shared: LockedFile? = {
        guard let path = ProcessInfo.processInfo.environment["STEPSIGN_TEST_LOG"], !path.isEmpty,
              let file = fopen(path, "a") else { return nil }
        return LockedFile(file: file)
    }()

    final class LockedFile: @unchecked Sendable {
        private let lock = NIOLock()
        private let file: UnsafeMutablePointer<FILE>

        init(file: UnsafeMutablePointer<FILE>) {
            self.file = file
        }

        func write(_ line: String) {
            lock.withLock {
                _ = fputs(line, file)
                _ = fflush(file)
            }
        }
    }

    /// One line per message, as swift-log's stream handler writes them.
    struct FileLogHandler: LogHandler {
        let label: String
        let file: LockedFile
        var logLevel: Logger.Level = .info
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            let fields = merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            file.write("\(Date()) \(event.level) \(label):\(fields) [\(event.source)] \(event.message)\n")
        }
    }
}
