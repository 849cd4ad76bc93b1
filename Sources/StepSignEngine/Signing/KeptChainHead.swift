#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOConcurrencyHelpers
import StepSignCrypto
import StepSignSystem

/// The hash of the entry at the size of a checkpoint this daemon signed, as the daemon chained
/// it itself, kept beside the checkpoint in its state directory (`log-checkpoint.head`: the size
/// and the hash in hex).
///
/// A C2SP checkpoint names the tree's root but not the hash chain's head, and the tree's
/// interior nodes below a checkpoint are not read again at start; entries swapped below it and
/// re-chained would leave both the root and the stored nodes as they were. The chain's head
/// would not be: at start the stored entry of that size must still carry this hash (SPEC §5.5:
/// a stored entry that disagrees stops signing).
final class KeptChainHead: Sendable {
    struct Head: Sendable, Equatable {
        var size: Int64
        var entryHash: [UInt8]
    }

    let path: String
    private let logger: Logger
    private let cached = NIOLockedValueBox<Head??>(nil)

    init(path: String, logger: Logger) {
        self.path = path
        self.logger = logger
    }

    /// The kept head, nil when none was kept, or when the file cannot be read or is malformed:
    /// the kept checkpoint still guards the log, but the head's check is off until the next
    /// checkpoint rewrites the file, which is logged (a warning, once) rather than silent.
    /// A read that failed for a fault that may pass (EIO, EMFILE, …) is thrown instead, and
    /// the file read again next time: at start that is exit 74, and the check stays on.
    func current() throws -> Head? {
        try cached.withLockedValue { cached in
            if let head = cached { return head }
            let head: Head?
            do {
                head = try Self.read(path)
            } catch let error as SystemError where TransientErrno.contains(error.errno) {
                throw error
            } catch {
                logger.warning("the log's kept chain head cannot be read: entries below the kept checkpoint are not checked against it until the next checkpoint rewrites it",
                               metadata: ["path": "\(path)", "error": "\(error)"])
                head = nil
            }
            cached = .some(head)
            return head
        }
    }

    /// Keeps `head` (written with `fsync`) unless the one kept is of the same size or larger.
    func keep(_ head: Head) throws {
        try cached.withLockedValue { cached in
            let old = cached ?? (try? Self.read(path))
            if let old, old.size >= head.size { return }
            try SecureFile.writeAtomically(Array("\(head.size) \(Hex.encode(head.entryHash))\n".utf8), to: path, mode: 0o600)
            cached = .some(head)
        }
    }

    /// Replaces the kept head whatever its size (`admin.recover`: the log goes on from a shorter one).
    func replace(with head: Head) throws {
        try cached.withLockedValue { cached in
            try SecureFile.writeAtomically(Array("\(head.size) \(Hex.encode(head.entryHash))\n".utf8), to: path, mode: 0o600)
            cached = .some(head)
        }
    }

    /// The head kept at `path`; nil when there is no file; throws when it cannot be read or is
    /// not "SIZE HEX" with a 32-byte hash.
    private static func read(_ path: String) throws -> Head? {
        guard let bytes = try SecureFile.readIfPresent(path) else { return nil }
        let parts = String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard parts.count == 2, let size = Int64(parts[0]), let hash = Hex.decode(String(parts[1])), hash.count == 32 else {
            throw MalformedHead()
        }
        return Head(size: size, entryHash: hash)
    }

    struct MalformedHead: Error, CustomStringConvertible {
        var description: String { "not a size and a 32-byte hash in hex" }
    }
}
