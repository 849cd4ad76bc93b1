internal import CPKCS11

extension PKCS11Token {
    /// DER of the named curve prime256v1 (OID 1.2.840.10045.3.1.7), `CKA_EC_PARAMS` of a P-256 key.
    static let p256Parameters: [UInt8] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
    /// DER of the OID 1.3.101.112 (id-Ed25519), `CKA_EC_PARAMS` of an Ed25519 key (PKCS#11 3.0).
    static let ed25519Parameters: [UInt8] = [0x06, 0x03, 0x2B, 0x65, 0x70]

    /// Makes a P-256 signing key in the token under `CKA_ID` `id` (SPEC §5.7): sensitive, never
    /// extractable, a token object. Returns it as a key that signs in the token.
    public func generateP256Key(id: [UInt8], label: String) throws(PKCS11Error) -> P256PrivateKey {
        let point = try generateKeyPair(mechanism: UInt(CKM_EC_KEY_PAIR_GEN), ecParams: Self.p256Parameters, id: id,
                                        label: label)
        return P256PrivateKey(token: self, id: id, publicKey: try Self.p256PublicKey(point))
    }

    /// The P-256 key under `CKA_ID` `id`, its public half read from the token's public key object.
    public func p256Key(id: [UInt8]) throws(PKCS11Error) -> P256PrivateKey {
        let publicKey = try Self.p256PublicKey(try publicPoint(id: id))
        // Found now, so that a key missing from the token fails the start, not the first signature.
        _ = try withSession { session throws(PKCS11Error) in try privateKeyHandle(id: id, in: session) }
        return P256PrivateKey(token: self, id: id, publicKey: publicKey)
    }

    /// Whether the token makes Ed25519 keys (`CKM_EC_EDWARDS_KEY_PAIR_GEN` and `CKM_EDDSA`);
    /// SoftHSM2 2.6 does, many hardware tokens do not.
    public var supportsEd25519: Bool {
        (try? supports(mechanism: UInt(CKM_EC_EDWARDS_KEY_PAIR_GEN))) == true
            && (try? supports(mechanism: UInt(CKM_EDDSA))) == true
    }

    /// Makes an Ed25519 key in the token under `CKA_ID` `id`, like ``generateP256Key(id:label:)``.
    public func generateEd25519Key(id: [UInt8], label: String) throws(PKCS11Error) -> Ed25519PrivateKey {
        let point = try generateKeyPair(mechanism: UInt(CKM_EC_EDWARDS_KEY_PAIR_GEN), ecParams: Self.ed25519Parameters,
                                        id: id, label: label)
        return Ed25519PrivateKey(token: self, id: id, publicKey: try Self.ed25519PublicKey(point))
    }

    /// The Ed25519 key under `CKA_ID` `id`.
    public func ed25519Key(id: [UInt8]) throws(PKCS11Error) -> Ed25519PrivateKey {
        let publicKey = try Self.ed25519PublicKey(try publicPoint(id: id))
        _ = try withSession { session throws(PKCS11Error) in try privateKeyHandle(id: id, in: session) }
        return Ed25519PrivateKey(token: self, id: id, publicKey: publicKey)
    }

    private static func p256PublicKey(_ point: [UInt8]) throws(PKCS11Error) -> P256PublicKey {
        guard let bare = unwrapPoint(point, length: 65), bare[0] == 0x04 else {
            throw PKCS11Error(operation: "C_GetAttributeValue", returnValue: nil, reason: "CKA_EC_POINT is not an uncompressed P-256 point")
        }
        do {
            return try P256PublicKey(x: Array(bare[1..<33]), y: Array(bare[33..<65]))
        } catch {
            throw PKCS11Error(operation: "C_GetAttributeValue", returnValue: nil, reason: "CKA_EC_POINT: \(error)")
        }
    }

    private static func ed25519PublicKey(_ point: [UInt8]) throws(PKCS11Error) -> Ed25519PublicKey {
        guard let bare = unwrapPoint(point, length: Ed25519PublicKey.size) else {
            throw PKCS11Error(operation: "C_GetAttributeValue", returnValue: nil, reason: "CKA_EC_POINT is not an Ed25519 key")
        }
        do {
            return try Ed25519PublicKey(raw: bare)
        } catch {
            throw PKCS11Error(operation: "C_GetAttributeValue", returnValue: nil, reason: "CKA_EC_POINT: \(error)")
        }
    }
}
