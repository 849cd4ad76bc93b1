internal import CLibcrypto

/// The certificate chain of a FIDO2 packed attestation (`x5c`, SPEC §5.7), checked against the
/// configured roots (`[lda] fido2_attestation_roots`) with libcrypto's X.509 verification.
public enum AttestationCertificates {
    /// Why a chain is refused.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case malformedCertificate(Int)
        case noRoots
        case untrusted(String)
        case leafKeyNotP256(String)

        public var description: String {
            switch self {
            case .malformedCertificate(let index): "x5c[\(index)] is not a DER certificate"
            case .noRoots: "fido2_attestation_roots holds no certificate"
            case .untrusted(let why): "the attestation certificate does not chain to fido2_attestation_roots: \(why)"
            case .leafKeyNotP256(let why): "the attestation certificate's key is not P-256: \(why)"
            }
        }
    }

    /// The public key of `certificates[0]` (DER), once it chains through `certificates[1...]`
    /// to a certificate of `rootsPEM` (valid now, as libcrypto checks by default).
    public static func verifiedLeafKey(certificates: [[UInt8]], rootsPEM: String) throws(Failure) -> P256PublicKey {
        var parsed: [OpaquePointer] = []
        defer { parsed.forEach { X509_free($0) } }
        for (index, der) in certificates.enumerated() {
            let certificate: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
                var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
                let result = d2i_X509(nil, &cursor, buffer.count)
                // Trailing bytes after the certificate are refused.
                return result.flatMap { cursor == buffer.baseAddress.map { $0 + buffer.count } ? $0 : { X509_free($0); return nil }($0) }
            }
            guard let certificate else {
                ERR_clear_error()
                throw .malformedCertificate(index)
            }
            parsed.append(certificate)
        }
        guard let leaf = parsed.first else { throw .malformedCertificate(0) }

        guard let store = X509_STORE_new() else { throw .untrusted("out of memory") }
        defer { X509_STORE_free(store) }
        var roots = 0
        if let bio = try? MemoryBIO(text: rootsPEM) {
            while let root = PEM_read_bio_X509(bio.pointer, nil, nil, nil) {
                X509_STORE_add_cert(store, root)
                X509_free(root)
                roots += 1
            }
        }
        ERR_clear_error()
        guard roots > 0 else { throw .noRoots }

        guard let untrusted = OPENSSL_sk_new_null() else { throw .untrusted("out of memory") }
        defer { OPENSSL_sk_free(untrusted) }
        for certificate in parsed.dropFirst() { OPENSSL_sk_push(untrusted, UnsafeRawPointer(certificate)) }
        guard let context = X509_STORE_CTX_new() else { throw .untrusted("out of memory") }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leaf, untrusted) == 1 else {
            ERR_clear_error()
            throw .untrusted("cannot set up the check")
        }
        guard X509_verify_cert(context) == 1 else {
            let code = X509_STORE_CTX_get_error(context)
            ERR_clear_error()
            throw .untrusted(String(cString: X509_verify_cert_error_string(Int(code))))
        }
        guard let key = X509_get_pubkey(leaf) else {
            ERR_clear_error()
            throw .leafKeyNotP256("no public key")
        }
        do {
            return try P256PublicKey(owning: key)
        } catch {
            throw .leafKeyNotP256("\(error)")
        }
    }
}
