#if canImport(Glibc)
import Glibc
import StepSignSystem
#endif

/// The lines of a file descriptor, read in chunks, each at most ``maximumLineLength`` bytes.
///
/// A longer line is refused as soon as that many bytes without a newline have been read: it is
/// never read whole, however long it is (an export line holds one JWS of at most 1 MiB and a
/// few fields, so 2 MiB is ample). Lines are returned without their `\n`; a last line without
/// one is returned too.
struct LineReader {
    /// The longest line accepted, in bytes, without its newline.
    static let maximumLineLength = 2 << 20

    private let descriptor: Int32
    /// How messages name the input ("stdin" or the path).
    private let name: String
    private var buffer: [UInt8] = []
    /// Where the next line starts in `buffer`.
    private var start = 0
    /// How far from `start` is known to hold no newline.
    private var scanned = 0
    private var atEnd = false
    /// The number of the line last returned (1 for the first).
    private(set) var lineNumber = 0

    init(descriptor: Int32, name: String) {
        self.descriptor = descriptor
        self.name = name
    }

    /// The next line's bytes, or nil at the end of the input.
    mutating func next() throws(InputFiles.Failure) -> ArraySlice<UInt8>? {
        while true {
            if let newline = findNewline() {
                let line = buffer[start..<newline]
                start = newline + 1
                scanned = 0
                lineNumber += 1
                return line
            }
            guard buffer.count - start <= Self.maximumLineLength else {
                throw InputFiles.Failure(description: "\(name) line \(lineNumber + 1) is longer than \(Self.maximumLineLength >> 20) MiB; refused")
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                let line = buffer[start...]
                start = buffer.count
                lineNumber += 1
                return line
            }
            try fill()
        }
    }

    /// The index of the first newline at or after `start`, scanning only what is new.
    private mutating func findNewline() -> Int? {
        let from = start + scanned
        guard from < buffer.count else { return nil }
        let found = buffer.withUnsafeBufferPointer { bytes -> Int? in
            guard let pointer = memchr(bytes.baseAddress! + from, 0x0A, bytes.count - from) else { return nil }
            return bytes.baseAddress!.distance(to: pointer.assumingMemoryBound(to: UInt8.self))
        }
        scanned = (found ?? buffer.count) - start
        return found
    }

    /// Drops the lines returned and reads one more chunk (or notes the end of the input).
    private mutating func fill() throws(InputFiles.Failure) {
        if start > 0 {
            buffer.removeSubrange(..<start)
            start = 0
        }
        let chunkSize = 256 * 1024
        let old = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: chunkSize))
        while true {
            let count = retryingOnEINTR { buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + old, chunkSize) } }
            guard count >= 0 else {
                buffer.removeSubrange(old...)
                throw InputFiles.Failure(description: "cannot read \(name): \(String(cString: strerror(errno)))")
            }
            buffer.removeSubrange((old + count)...)
            if count == 0 { atEnd = true }
            return
        }
    }
}
