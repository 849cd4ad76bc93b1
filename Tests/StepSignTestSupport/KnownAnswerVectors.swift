import Foundation

/// The known-answer vectors in `Tests/Vectors/known-answer.json`: a fixed P-256 key, one
/// signature with its exact header, claims, signing input and signature bytes, and a chain of
/// three ledger entries with their hashes. `Tests/Vectors/generate.py` computed them with
/// Python's hashlib and `cryptography`, not with stepsign; other implementations can read the
/// same file.
public struct KnownAnswerVectors: Decodable, Sendable {
    /// The test key.
    public struct Key: Decodable, Sendable {
        /// The private key, PKCS#8 PEM, unencrypted (a test key: never use it for anything else).
        public var privateKeyPKCS8PEM: String
        /// The public key, SPKI PEM.
        public var publicKeySPKIPEM: String
        /// Its RFC 7638 thumbprint.
        public var kid: String
    }

    /// The peer claim's inputs.
    public struct Peer: Decodable, Sendable {
        public var uid: UInt32
        public var pid: Int32
        public var comm: String
    }

    /// What the signer is given for the pinned signature.
    public struct Inputs: Decodable, Sendable {
        public var iss: String
        public var sub: String
        public var jti: String
        public var iat: Int64
        public var payload: String
        public var payloadLength: Int
        public var reason: String
        public var authLevel: Int
        public var authenticatorType: Int
        public var authenticatorUsed: String
        public var peer: Peer
    }

    /// One signature with its exact bytes.
    public struct Signature: Decodable, Sendable {
        public var inputs: Inputs
        /// The protected header, as signed.
        public var headerJSON: String
        /// The claims, as signed.
        public var payloadJSON: String
        /// `BASE64URL(header) "." BASE64URL(payload)`.
        public var signingInput: String
        /// r||s, low S.
        public var signatureHex: String
        /// The compact JWS.
        public var jws: String
    }

    /// One ledger entry of the chain.
    public struct ChainEntry: Decodable, Sendable {
        public var seq: Int64
        public var jws: String
        /// SHA-256 of the JWS text, hex.
        public var jwsSHA256: String
        public var prevHash: String
        public var entryHash: String
    }

    /// The chain of three entries from the genesis hash.
    public struct Chain: Decodable, Sendable {
        public var genesisPrevHash: String
        public var entries: [ChainEntry]
    }

    public var key: Key
    public var signature: Signature
    public var chain: Chain

    /// The vector file, found from this source file's path (`Tests/StepSignTestSupport/…`).
    public static let fileURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors/known-answer.json")

    /// Reads and decodes the vector file.
    public static func load() throws -> KnownAnswerVectors {
        try JSONDecoder().decode(KnownAnswerVectors.self, from: Data(contentsOf: fileURL))
    }
}
