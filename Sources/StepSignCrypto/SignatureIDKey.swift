/// A signature ID as the key of a set: its UUID's 16 bytes (``UUIDBits``) when it is a
/// lowercase canonical UUID, as every ID the daemon makes is, else its text. Two IDs are equal
/// keys exactly when their texts are equal (a UUID in upper case stays text, so it is not the
/// same key as its lowercase form, as it is not the same ID). A session's recent IDs and the
/// ledger verifier's IDs seen keep these: no heap string per ID, 16 bytes hashed rather than 36.
package enum SignatureIDKey: Hashable, Sendable {
    case uuid(UUIDBits)
    case text(String)

    package init(_ id: String) {
        self = UUIDBits(canonical: id).map(SignatureIDKey.uuid) ?? .text(id)
    }
}
