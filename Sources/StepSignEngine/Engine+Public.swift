import StepSignCrypto
import StepSignFormat
import StepSignProtocol
import struct Foundation.Date

extension Engine {
    /// `getPublicKeys`: the JWKS or PEM bundle of every daemon's keys, retired ones included,
    /// read from the store now (another daemon may have rotated or revoked since).
    func getPublicKeys(format: String?) async throws -> Reply {
        let format = format ?? "jwks"
        guard format == "jwks" || format == "pem" || format == "ssh" else {
            throw StepSignError.invalid("\"format\" must be \"jwks\", \"pem\" or \"ssh\"")
        }
        try await signing.keyring.refresh()
        if format == "ssh" { return Reply(result: ["ssh": sshPublicKeys()]) }
        // A PEM bundle cannot say where a revoked key's validity ends: it carries the
        // unrevoked keys only; the JWKS carries revoked ones with `stepsign_revoked_at`.
        // The note verifier keys of this daemon's checkpoints (SPEC §5.5), in either format.
        let logKeys = JSONValue.array(signing.log.verifierKeys.map { .string($0.description) })
        if format == "pem" { return Reply(result: ["pem": .string(signing.keyring.unrevokedKeys.pemBundle), "logKeys": logKeys]) }
        return Reply(result: ["jwks": Self.jwksJSON(signing.keyring.trustedKeys.jwks), "logKeys": logKeys])
    }

    /// `getSignature`: the ledger row, for the session that made it or an admin.
    func getSignature(_ signatureID: String, session: Session) async throws -> Reply {
        guard session.isAdmin || session.signatureIDs.contains(signatureID) else {
            throw StepSignError(.permissionDenied, "only the session that made a signature, or an admin, may read it")
        }
        // Events (SPEC §5.4) are ledger entries too, but not signatures.
        guard let entry = try await signing.store.ledgerEntry(signatureID: signatureID), !LedgerExportEntry.isEvent(entry.jws) else {
            throw StepSignError.invalid("no signature \"\(signatureID)\"")
        }
        return Reply(result: [
            "signatureID": .string(entry.signatureID),
            "user": .string(entry.user),
            "iat": .int(entry.iat),
            "kid": .string(entry.kid),
            "payloadSignature": .string(entry.jws),
            "seq": .int(entry.seq),
            "entryHash": .string(Hex.encode(entry.entryHash)),
            "peer": ["uid": .int(Int64(entry.peer.uid)), "pid": .int(Int64(entry.peer.pid)), "comm": .string(entry.peer.comm)],
        ])
    }

    /// `status`'s result.
    ///
    /// `logProblem` is there only when the log cannot be extended (``LogAlarm``).
    func statusResult(now: Date) async throws -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("version", .string(Self.version)),
            ("uptimeSeconds", .int(Int64(now.timeIntervalSince(startedAt)))),
            ("activeKid", .string(signing.keyring.active.kid)),
            ("signatures", .int(try await signing.store.ledgerSignatureCount())),
        ]
        if let problem = signing.logAlarm.current { members.append(("logProblem", .string(problem))) }
        let quorum = settings.config.ledger.witnessQuorum
        if quorum > 0 { members.append(("witnessed", .bool(try await latestCheckpointIsWitnessed(quorum: quorum)))) }
        return .object(members)
    }

    static func jwksJSON(_ jwks: JWKS) -> JSONValue {
        .object([("keys", .array(jwks.keys.map(jwkJSON)))])
    }

    /// One JWK as JSON, its members in the order of RFC 7517's examples, then stepsign's.
    static func jwkJSON(_ key: JWK) -> JSONValue {
        var members: [(String, JSONValue)] = [("kty", .string(key.kty))]
        if let crv = key.crv { members.append(("crv", .string(crv))) }
        if let x = key.x { members.append(("x", .string(x))) }
        if let y = key.y { members.append(("y", .string(y))) }
        if let kid = key.kid { members.append(("kid", .string(kid))) }
        if let alg = key.alg { members.append(("alg", .string(alg))) }
        if let use = key.use { members.append(("use", .string(use))) }
        if let revokedAt = key.revokedAt { members.append(("stepsign_revoked_at", .int(revokedAt))) }
        return .object(members)
    }
}
