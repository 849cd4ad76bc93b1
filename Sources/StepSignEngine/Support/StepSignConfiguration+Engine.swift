import StepSignSystem
import StepSignCommonPasswords
import StepSignConfig
import StepSignCrypto
import StepSignFormat

extension StepSignConfiguration.Password {
    /// The scrypt cost new password hashes are made with (`password.scrypt_n`, `_r`, `_p`).
    public var scryptParameters: ScryptParameters {
        ScryptParameters(n: UInt64(scryptN), r: UInt32(scryptR), p: UInt32(scryptP))
    }

    /// The common-password list in force: `common_passwords_file`, else the built-in list.
    public func loadCommonPasswords() throws(ConfigError) -> CommonPasswords {
        commonPasswordsFile.isEmpty ? .builtIn : try CommonPasswords(contentsOf: commonPasswordsFile)
    }
}

extension StepSignConfiguration.IDV {
    /// Why the IDV server's keys could not be loaded.
    public struct KeysError: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "idv.trusted_keys: \(path): \(reason)" }
    }

    /// The keys in `trusted_keys` (a PEM bundle or JWKS file), or nil when IDV is off.
    public func loadTrustedKeys() throws -> TrustedKeys? {
        guard !issuer.isEmpty else { return nil }
        let text: String
        do {
            text = String(decoding: try SecureFile.read(trustedKeys), as: UTF8.self)
        } catch {
            throw KeysError(path: trustedKeys, reason: "\(error)")
        }
        do {
            return try TrustedKeys(parsing: text)
        } catch {
            throw KeysError(path: trustedKeys, reason: "\(error)")
        }
    }
}

extension StepSignConfiguration.Cluster {
    /// Why the cluster root key could not be read.
    public struct RootKeyError: Error, CustomStringConvertible {
        public var reason: String
        public var description: String { "cluster.root_key: \(reason)" }
    }

    /// The cluster root public key of `root_key` (PEM or JWK text, or a file holding one), or
    /// nil when none is configured.
    public func loadRootKey() throws -> P256PublicKey? {
        guard !rootKey.isEmpty else { return nil }
        var text = rootKey
        if rootKeyIsFile {
            do {
                text = String(decoding: try SecureFile.read(rootKey), as: UTF8.self)
            } catch {
                throw RootKeyError(reason: "\(rootKey): \(error)")
            }
        }
        let trimmed = String(text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
        do {
            if trimmed.hasPrefix("{") { return try P256PublicKey(jwkJSON: Array(trimmed.utf8)) }
            return try P256PublicKey(spkiPEM: trimmed)
        } catch {
            throw RootKeyError(reason: "not a P-256 public key (PEM or JWK): \(error)")
        }
    }
}

extension StepSignConfiguration {
    /// Why a `[[witness]]` key could not be used.
    public struct WitnessKeyError: Error, CustomStringConvertible {
        public var witness: String
        public var reason: String
        public var description: String { "witness \(witness): key: \(reason)" }
    }

    /// The `[[witness]]` cosignature keys (SPEC §5.6), each checked as a C2SP vkey of type 0x04
    /// whose key ID is its key's, named as its witness.
    public func loadWitnessKeys() throws(WitnessKeyError) -> [NoteVerifierKey] {
        try witnesses.map { witness throws(WitnessKeyError) in
            let key: NoteVerifierKey
            do {
                key = try NoteVerifierKey(witness.key)
            } catch {
                throw WitnessKeyError(witness: witness.name, reason: "\(error)")
            }
            guard key.type == .cosignatureV1, key.name == witness.name else {
                throw WitnessKeyError(witness: witness.name, reason: "not a cosignature key (type 0x04) named \(witness.name)")
            }
            return key
        }
    }
}
