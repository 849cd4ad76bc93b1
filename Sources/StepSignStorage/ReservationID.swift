import Foundation
import StepSignCrypto

/// Names one attempt an answer reserved before its check (SPEC §5.1), so that the store knows
/// which reservations are still in flight and the answer settles its own when it has been
/// checked.
///
/// The answer makes it (random) and passes it to every call about its attempt; the store keeps
/// it beside the name's keyed hash and the reservation's expiry, never the name itself.
public struct ReservationID: Sendable, Hashable, CustomStringConvertible {
    /// The ID's bytes (``byteCount`` of them).
    public let bytes: Data

    /// How long an ID is: 128 random bits.
    public static let byteCount = 16

    public init(bytes: Data) {
        self.bytes = bytes
    }

    /// A new random ID (from OpenSSL's `RAND_bytes`).
    public static func random() throws -> ReservationID {
        ReservationID(bytes: Data(try SecureRandom.bytes(count: byteCount)))
    }

    public var description: String { "ReservationID(\(bytes.map { String(format: "%02x", $0) }.joined()))" }
}
