import StepSignCrypto

/// A P-256 key as SSH names it, `ecdsa-sha2-nistp256` (RFC 5656 §3.1): the key blob an agent
/// lists and a signature names, the `authorized_keys`/`allowed_signers` text, and the
/// signature encoding (RFC 5656 §3.1.2: `mpint r`, `mpint s` inside the signature blob).
public enum SSHPublicKey {
    /// The key type and signature algorithm.
    public static let keyType = "ecdsa-sha2-nistp256"
    /// The curve's SSH name.
    public static let curve = "nistp256"

    /// The public key blob: string key type, string curve, string Q (uncompressed point).
    public static func blob(_ key: P256PublicKey) -> [UInt8] {
        var writer = SSHWireWriter()
        writer.string(keyType)
        writer.string(curve)
        writer.string([0x04] + key.x + key.y)
        return writer.bytes
    }

    /// The key as one `authorized_keys` line: type, base64 blob and `comment` (if not empty).
    public static func line(_ key: P256PublicKey, comment: String = "") -> String {
        let text = keyType + " " + Base64.encode(blob(key))
        return comment.isEmpty ? text : text + " " + comment
    }

    /// The signature blob of the raw ES256 signature `rs` (r ‖ s, 32 bytes each): string
    /// `ecdsa-sha2-nistp256`, string (mpint r, mpint s). ECDSA over SHA-256 of the signed
    /// data is exactly what ES256 computes, so the daemon's signer makes SSH signatures too.
    public static func signatureBlob(rawES256 rs: [UInt8]) -> [UInt8] {
        precondition(rs.count == 64, "an ES256 signature is 64 bytes")
        var inner = SSHWireWriter()
        inner.mpint(rs[0..<32])
        inner.mpint(rs[32..<64])
        var writer = SSHWireWriter()
        writer.string(keyType)
        writer.string(inner.bytes)
        return writer.bytes
    }
}
