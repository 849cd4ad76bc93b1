import StepSignCrypto
import StepSignProtocol

/// What `keys/` holds of a key in a PKCS#11 token (SPEC §5.7): the `CKA_ID` the daemon made it
/// under and its public half, as one JSON object, `{"pkcs11Id": HEX, "publicKey": SPKI PEM}`.
/// Nothing of the private key: that stays in the token.
struct TokenKeyRecord: Equatable {
    /// The file name suffix of a signing key's record, `<kid>.pkcs11`.
    static let suffix = ".pkcs11"

    var id: [UInt8]
    var publicKeyPEM: String

    init(id: [UInt8], publicKeyPEM: String) {
        self.id = id
        self.publicKeyPEM = publicKeyPEM
    }

    /// Reads a record; throws ``StepSignError`` 4 for anything else.
    init(bytes: [UInt8]) throws {
        let value = try JSONParser.parse(bytes)
        guard let hex = value["pkcs11Id"]?.stringValue, let id = Hex.decode(hex), !id.isEmpty,
              let pem = value["publicKey"]?.stringValue else {
            throw StepSignError.invalid("not a PKCS#11 key record (pkcs11Id, publicKey)")
        }
        self.init(id: id, publicKeyPEM: pem)
    }

    var bytes: [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.member("pkcs11Id", Hex.encode(id))
        writer.member("publicKey", publicKeyPEM)
        writer.endObject()
        return writer.bytes + [0x0A]
    }
}
