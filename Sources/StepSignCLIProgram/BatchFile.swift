import Foundation
import StepSignCrypto
import StepSignFormat
import StepSignProtocol

/// `stepsign sign --batch FILE`: the batch's items, one JSON object `{payload, reason}` a
/// line (blank lines skipped; `reason` may be left out when `--reason` gives it), and the
/// manifest the daemon must show for them (SPEC §3.4).
struct BatchFile {
    struct Item {
        var payload: String
        var reason: String
    }

    var items: [Item]

    /// Reads `path` (`-`: stdin); a line that is not such an object is exit 2, naming the line.
    init(path: String, defaultReason: String?) throws {
        let data: Data?
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            data = FileManager.default.contents(atPath: path)
        }
        guard let data, let text = String(data: data, encoding: .utf8) else {
            throw CLIError("cannot read the batch file \(path) as UTF-8 text", exitCode: 2)
        }
        var items: [Item] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            guard !line.allSatisfy(\.isWhitespace) else { continue }
            let where_ = "\(path):\(number + 1)"
            guard let object = try? JSONParser.parse(Array(line.utf8)), object.members != nil else {
                throw CLIError("\(where_): not a JSON object {\"payload\", \"reason\"}", exitCode: 2)
            }
            for (key, _) in object.members ?? [] where key != "payload" && key != "reason" {
                throw CLIError("\(where_): unknown member \"\(key)\" (an item is {\"payload\", \"reason\"})", exitCode: 2)
            }
            guard let payload = object["payload"]?.stringValue else {
                throw CLIError("\(where_): \"payload\" must be a string", exitCode: 2)
            }
            guard let reason = object["reason"]?.stringValue ?? defaultReason else {
                throw CLIError("\(where_): no \"reason\" (give one on the line, or --reason)", exitCode: 2)
            }
            items.append(Item(payload: payload, reason: reason))
        }
        guard !items.isEmpty else { throw CLIError("the batch file \(path) has no items", exitCode: 2) }
        self.items = items
    }

    /// The `items` parameter of `authenticateUserAndSignBatch`.
    var parameter: JSONValue {
        .array(items.map { .object([("payload", .string($0.payload)), ("reason", .string($0.reason))]) })
    }

    /// Checks that `manifest` (a challenge's) is this batch's: its count, bytes and root, so the
    /// step-up approves what this file holds and nothing else.
    func check(manifest: JSONValue) throws {
        let root = Base64.encode(BatchRoot.of(payloads: items.map(\.payload)))
        let bytes = items.reduce(0) { $0 + $1.payload.utf8.count }
        guard manifest["count"]?.int == items.count, manifest["bytes"]?.int == bytes, manifest["root"]?.stringValue == root else {
            throw CLIError("the daemon's batch manifest is not this batch's (count \(items.count), bytes \(bytes), root \(root)); not answered")
        }
    }

    /// The manifest as the person approving it reads it, before the step-up.
    static func describe(_ manifest: JSONValue) -> String {
        let reasons = manifest["reasons"]?.arrayValue?.compactMap(\.stringValue) ?? []
        return "signing \(manifest["count"]?.int ?? 0) payloads (\(manifest["bytes"]?.int ?? 0) bytes, root \(manifest["root"]?.stringValue ?? "?")) for: "
            + reasons.joined(separator: "; ")
    }
}
