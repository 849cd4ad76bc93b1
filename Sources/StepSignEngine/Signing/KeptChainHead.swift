#if canImport(Glibc)
import Glibc
#endif
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
    private let cached = NIOLockedValueBox<Head??>(nil)

    init(path: String) {
        self.path = path
    }

    /// The kept head, nil when none was kept (or the file cannot be read: the kept checkpoint
    /// still guards the log).
    func current() -> Head? {
        cached.withLockedValue { cached in
            if let head = cached { return head }
            let head = Self.read(path)
            cached = .some(head)
            return head
        }
    }

    /// Keeps `head` (written with `fsync`) unless the one kept is of the same size or larger.
    func keep(_ head: Head) throws {
        try cached.withLockedValue { cached in
            let old = cached ?? Self.read(path)
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

    private static func read(_ path: String) -> Head? {
        guard access(path, F_OK) == 0, let bytes = try? SecureFile.read(path) else { return nil }
        let parts = String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard parts.count == 2, let size = Int64(parts[0]), let hash = Hex.decode(String(parts[1])), hash.count == 32 else {
            return nil
        }
        return Head(size: size, entryHash: hash)
    }
}
