import StepSignCrypto

/// What a log entry's JWS fixes once a trusted key's signature on it verifies: a signature
/// (SPEC §2) or an event (SPEC §5.4), told apart by the header's `typ`. The ledger verifier
/// checks the export's columns against it; the monitor reports it and follows the events.
public struct VerifiedLogEntry: Sendable {
    /// The signature ID or event ID.
    public var jti: String
    /// The signature's `sub`; an event's `user`, or "" when it names none.
    public var user: String
    public var iat: Int64
    public var peer: SignaturePeer?
    /// The signing key's ID (the header's `kid`).
    public var kid: String
    /// A signature's authentication level (0: the user was not authenticated, the name is a
    /// label); nil for an event.
    public var authLevel: Int?
    /// The event, when the entry is one.
    public var event: LedgerEvent?

    /// StepSignSignature.verify's own steps (or LedgerEvent.verify's, by the header's `typ`),
    /// keeping the header's kid (one parse per entry). Pure, so entries can be verified on
    /// several threads at once.
    ///
    /// One exception: an entry without a `peer` claim was made before the daemon signed
    /// low-S, so about half of those are high-S; they are accepted (the chain up to the first
    /// checkpoint above them pins each one's exact string). Entries with `peer` must be low-S.
    public static func verify(_ jws: String, keys: TrustedKeys) -> Result<VerifiedLogEntry, SignatureVerificationError> {
        do {
            if LedgerExportEntry.isEvent(jws) {
                let (event, kid) = try LedgerEvent.verify(jws, trustedKeys: keys)
                return .success(VerifiedLogEntry(jti: event.jti, user: event.user ?? "", iat: event.iat, peer: event.peer,
                                                 kid: kid, authLevel: nil, event: event))
            }
            let (compact, kid) = try StepSignSignature.verifiedPayload(jws, type: StepSignSignature.headerType,
                                                                       trustedKeys: keys, requireLowS: false)
            let claims = try StepSignSignature.decodeStrictly(SignatureClaims.self, from: compact.payload)
            guard claims.peer == nil || ECDSALowS.isLowS(compact.signature) else { return .failure(.highS) }
            return .success(VerifiedLogEntry(jti: claims.jti, user: claims.sub, iat: claims.iat, peer: claims.peer, kid: kid,
                                             authLevel: claims.authLevel))
        } catch {
            return .failure(error)
        }
    }
}
