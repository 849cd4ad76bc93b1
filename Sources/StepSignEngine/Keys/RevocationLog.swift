import StepSignCrypto
import StepSignFormat
import StepSignStorage
import struct Foundation.Date

/// The signing-key revocations the ledger holds (SPEC §5.4: a revocation is a signed log event,
/// not a column): `signingKeyRevoked` events signed by a trusted key, read incrementally from
/// the events that name no user (an index range; user events are never read here).
///
/// Every daemon applies them, not only the key's holder: a revocation column cleared in the
/// database is written back and logged at critical by whichever daemon reads the keys first.
struct RevocationLog: Sendable {
    /// A revocation the log holds.
    struct Revocation: Sendable, Equatable {
        /// The log index (seq − 1) of the revocation event.
        var logIndex: Int64
        /// When it was made (the event's `iat`).
        var at: Date
    }

    /// The revocations read so far, by kid (the first event of a key counts).
    private(set) var revocations: [String: Revocation] = [:]
    /// The seq of the last event read.
    private(set) var readThrough: Int64 = 0

    /// Events read per query.
    static let pageSize = 512

    /// Reads the events appended since the last call; keeps the revocations that verify under
    /// `verifiers`. An event that does not verify is skipped for good (it stays in the ledger,
    /// where `admin.auditVerify` reports it).
    mutating func catchUp(store: any StepSignStore, verifiers: TrustedKeys) async throws {
        while true {
            let page = try await store.ledgerEvents(user: "", afterSeq: readThrough, limit: Self.pageSize)
            for entry in page {
                guard let event = try? LedgerEvent.verify(entry.jws, trustedKeys: verifiers).event,
                      event.kind == .signingKeyRevoked, let kid = event.detail("kid"), revocations[kid] == nil else { continue }
                revocations[kid] = Revocation(logIndex: entry.seq - 1, at: Date(timeIntervalSince1970: Double(event.iat)))
            }
            guard let last = page.last else { return }
            readThrough = last.seq
            if page.count < Self.pageSize { return }
        }
    }
}
