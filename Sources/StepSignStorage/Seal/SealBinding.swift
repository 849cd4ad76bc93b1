/// What a user's seal binds the user's row to besides the row's own fields (SPEC §5.4): the log
/// index of the user's latest event, and digests of the rows kept beside it (password history,
/// device keys), so that those cannot be added, removed or rolled back unseen either.
package struct SealBinding: Sendable, Equatable {
    /// The log index (seq − 1) of the user's latest event when the record was sealed; -1 when
    /// the log held none.
    package var eventIndex: Int64
    /// ``CredentialSeal/historyDigest(_:)`` of the user's password history.
    package var historyDigest: [UInt8]
    /// ``CredentialSeal/deviceKeysDigest(_:)`` of the user's device keys.
    package var deviceKeysDigest: [UInt8]

    package init(eventIndex: Int64, historyDigest: [UInt8], deviceKeysDigest: [UInt8]) {
        self.eventIndex = eventIndex
        self.historyDigest = historyDigest
        self.deviceKeysDigest = deviceKeysDigest
    }

    /// The index stored for "no event yet".
    package static let noEvent: Int64 = -1
}
