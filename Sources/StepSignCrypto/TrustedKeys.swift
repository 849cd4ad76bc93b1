#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A verifier's set of trusted P-256 public keys, looked up by key ID (`kid`).
///
/// Every key is found under its RFC 7638 thumbprint (stepsign's `kid`). A key read from a
/// JWKS whose `kid` differs from its thumbprint is *also* found under that `kid`: other
/// issuers (e.g. an IDV server) name their keys freely, and the thumbprint lookup stays
/// available. Two different keys may not claim the same `kid`.
public struct TrustedKeys: Sendable {
    private struct Entry: Sendable {
        let kid: String
        let key: P256PublicKey
    }

    private let entries: [Entry]
    private let byKid: [String: P256PublicKey]
    /// Keys revoked at a log index (SPEC §5.4), by thumbprint: a signature by one is valid only
    /// at a lower index.
    public let revokedAt: [String: Int64]

    /// A set of `keys`, each under its thumbprint; the same key given twice counts once.
    /// `revokedAt` gives the log index at which a key (by thumbprint) was revoked.
    public init(keys: [P256PublicKey], revokedAt: [String: Int64] = [:]) {
        var seen = Set<String>()
        var entries: [Entry] = []
        for key in keys where seen.insert(key.thumbprint).inserted {
            entries.append(Entry(kid: key.thumbprint, key: key))
        }
        self.entries = entries
        byKid = Dictionary(uniqueKeysWithValues: entries.map { ($0.kid, $0.key) })
        self.revokedAt = revokedAt.filter { seen.contains($0.key) }
    }

    /// The log index `key` was revoked at, or nil.
    public func revocationIndex(of key: P256PublicKey) -> Int64? {
        revokedAt[key.thumbprint]
    }

    /// Reads a PEM bundle (one or more `-----BEGIN PUBLIC KEY-----` blocks; text between
    /// blocks is ignored, any other PEM block type is an error) or a JSON document: a JWKS
    /// (`{"keys": [...]}`) or a single JWK.
    ///
    /// In a JWKS, keys that are not for ES256 — `kty` other than "EC", `crv` other than
    /// "P-256", `use` other than "sig" or `alg` other than "ES256" when present — are skipped,
    /// as long as at least one usable key remains. A key that claims EC P-256 but is broken
    /// (bad base64url, wrong length, point not on the curve) is an error, never skipped.
    public init(parsing text: String) throws(P256KeyError) {
        let trimmed = text.drop { $0.isWhitespace }
        if trimmed.first == "{" {
            try self.init(json: Array(text.utf8))
        } else {
            try self.init(pemBundle: text)
        }
    }

    private init(json: [UInt8]) throws(P256KeyError) {
        let decoder = JSONDecoder()
        let jwks: JWKS
        if let set = try? decoder.decode(JWKS.self, from: Data(json)) {
            jwks = set
        } else if let single = try? decoder.decode(JWK.self, from: Data(json)) {
            jwks = JWKS(keys: [single])
        } else {
            throw .malformed("not a JWKS or JWK JSON document")
        }
        var entries: [Entry] = []
        var byKid: [String: P256PublicKey] = [:]
        var revokedAt: [String: Int64] = [:]
        for jwk in jwks.keys where Self.isES256Candidate(jwk) {
            let key = try P256PublicKey(jwk: jwk)
            if let index = jwk.revokedAt {
                guard index >= 0 else { throw .malformed("stepsign_revoked_at must be 0 or more") }
                revokedAt[key.thumbprint] = index
            }
            let kid = jwk.kid ?? key.thumbprint
            for name in Set([kid, key.thumbprint]) {
                if let other = byKid[name], other.thumbprint != key.thumbprint {
                    throw .malformed("kid \(name) names two different keys")
                }
                byKid[name] = key
            }
            if !entries.contains(where: { $0.key.thumbprint == key.thumbprint && $0.kid == kid }) {
                entries.append(Entry(kid: kid, key: key))
            }
        }
        guard !entries.isEmpty else { throw .unsupportedKey("no EC P-256 signing key in the JWKS") }
        self.entries = entries
        self.byKid = byKid
        self.revokedAt = revokedAt
    }

    private init(pemBundle text: String) throws(P256KeyError) {
        let begin = "-----BEGIN ", publicBegin = "-----BEGIN PUBLIC KEY-----", publicEnd = "-----END PUBLIC KEY-----"
        var keys: [P256PublicKey] = []
        var rest = text[...]
        while let start = rest.firstRange(of: begin) {
            guard rest[start.lowerBound...].hasPrefix(publicBegin) else {
                throw .malformed("only PUBLIC KEY blocks may appear in a PEM bundle")
            }
            guard let end = rest[start.lowerBound...].firstRange(of: publicEnd) else {
                throw .malformed("PUBLIC KEY block without its END line")
            }
            keys.append(try P256PublicKey(spkiPEM: String(rest[start.lowerBound..<end.upperBound]) + "\n"))
            rest = rest[end.upperBound...]
        }
        guard !keys.isEmpty else { throw .malformed("no PEM PUBLIC KEY block and not JSON") }
        self.init(keys: keys)
    }

    private static func isES256Candidate(_ jwk: JWK) -> Bool {
        jwk.kty == "EC" && jwk.crv == "P-256"
            && (jwk.use == nil || jwk.use == "sig")
            && (jwk.alg == nil || jwk.alg == "ES256")
    }

    /// The key with this `kid` (thumbprint, or a JWKS's own `kid`), or nil.
    public func key(kid: String) -> P256PublicKey? {
        byKid[kid]
    }

    /// Every trusted key once, in the order read.
    public var all: [P256PublicKey] {
        var seen = Set<String>()
        return entries.compactMap { seen.insert($0.key.thumbprint).inserted ? $0.key : nil }
    }

    /// The keys as a JWKS, each with the `kid` it was read under and, when revoked, its
    /// `stepsign_revoked_at`.
    public var jwks: JWKS {
        JWKS(keys: entries.map { entry in
            var jwk = entry.key.jwk
            jwk.kid = entry.kid
            jwk.revokedAt = revokedAt[entry.key.thumbprint]
            return jwk
        })
    }

    /// The keys as a PEM bundle of `PUBLIC KEY` blocks.
    public var pemBundle: String {
        all.map(\.spkiPEM).joined()
    }
}
