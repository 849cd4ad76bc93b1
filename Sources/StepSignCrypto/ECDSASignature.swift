internal import CLibcrypto
internal import COpenSSLShims

/// Conversions between the two encodings of an ECDSA P-256 signature: JOSE's raw `r||s`
/// (RFC 7518 §3.4, 64 bytes, each half left-padded to 32) and the DER `ECDSA-Sig-Value`
/// that libcrypto and the `openssl` CLI use.
public enum ECDSASignature {
    /// Bytes of each of r and s in a P-256 raw signature.
    static let halfLength = 32

    /// DER of a raw 64-byte `r||s` signature.
    public static func derFromRaw(_ raw: [UInt8]) throws(ECDSASignatureError) -> [UInt8] {
        guard raw.count == 2 * halfLength else { throw .wrongRawLength(raw.count) }
        guard let sig = ECDSA_SIG_new() else { throw .openSSL(.drain("ECDSA_SIG_new")) }
        defer { ECDSA_SIG_free(sig) }
        let (r, s) = raw.withUnsafeBufferPointer { buffer in
            (BN_bin2bn(buffer.baseAddress, Int32(halfLength), nil),
             BN_bin2bn(buffer.baseAddress! + halfLength, Int32(halfLength), nil))
        }
        guard let r, let s else {
            BN_free(r); BN_free(s)
            throw .openSSL(.drain("BN_bin2bn"))
        }
        // ECDSA_SIG_set0 takes ownership of r and s on success only.
        guard ECDSA_SIG_set0(sig, r, s) == 1 else {
            BN_free(r); BN_free(s)
            throw .openSSL(.drain("ECDSA_SIG_set0"))
        }
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(sig, &out)
        guard length > 0, let out else { throw .openSSL(.drain("i2d_ECDSA_SIG")) }
        defer { stepsign_OPENSSL_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// The raw 64-byte `r||s` of `der` when it is the canonical DER libcrypto's signing writes
    /// for P-256 (a SEQUENCE of short length holding two minimal positive INTEGERs of at most 33
    /// bytes, nothing after them); nil for anything else, which the caller decodes with
    /// ``rawFromDER(_:strict:)``. Read in Swift, for the signatures this daemon makes: libcrypto's
    /// `d2i_ECDSA_SIG` allocates a signature and two bignums to read them (issue 43).
    package static func rawFromCanonicalDER(_ der: [UInt8]) -> [UInt8]? {
        guard der.count >= 8, der[0] == 0x30, Int(der[1]) == der.count - 2, der[1] < 0x80 else { return nil }
        var raw = [UInt8](repeating: 0, count: 2 * halfLength)
        var at = 2
        for half in 0..<2 {
            guard at + 2 <= der.count, der[at] == 0x02 else { return nil }
            let length = Int(der[at + 1])
            let start = at + 2
            guard length >= 1, length <= halfLength + 1, start + length <= der.count,
                  der[start] & 0x80 == 0,                                   // positive
                  length == 1 || der[start] != 0 || der[start + 1] & 0x80 != 0  // minimal
            else { return nil }
            // A leading zero only keeps the number positive; at most 32 bytes remain.
            let digits = der[start] == 0 && length > 1 ? start + 1 : start
            let count = start + length - digits
            guard count <= halfLength else { return nil }
            let end = (half + 1) * halfLength
            for index in 0..<count { raw[end - count + index] = der[digits + index] }
            at = start + length
        }
        return at == der.count ? raw : nil
    }

    /// The raw 64-byte `r||s` of a strict DER signature.
    ///
    /// Rejects BER leniencies (trailing bytes, non-minimal lengths or integers) by re-encoding
    /// and comparing, and r or s longer than 32 bytes.
    public static func rawFromDER(_ der: [UInt8]) throws(ECDSASignatureError) -> [UInt8] {
        try rawFromDER(der, strict: true)
    }

    static func rawFromDER(_ der: [UInt8], strict: Bool) throws(ECDSASignatureError) -> [UInt8] {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let sig = d2i_ECDSA_SIG(nil, &cursor, buffer.count)
            // All input must be consumed: no trailing bytes.
            if let sig, cursor != buffer.baseAddress.map({ $0 + buffer.count }) {
                ECDSA_SIG_free(sig)
                return nil
            }
            return sig
        }
        guard let sig = parsed else {
            ERR_clear_error() // the queue only says "bad DER", which the case already says
            throw .malformedDER
        }
        defer { ECDSA_SIG_free(sig) }
        if strict {
            var out: UnsafeMutablePointer<UInt8>?
            let length = i2d_ECDSA_SIG(sig, &out)
            guard length > 0, let out else { throw .openSSL(.drain("i2d_ECDSA_SIG")) }
            defer { stepsign_OPENSSL_free(out) }
            guard Int(length) == der.count, memcmp(out, der, der.count) == 0 else { throw .malformedDER }
        }
        let r = ECDSA_SIG_get0_r(sig), s = ECDSA_SIG_get0_s(sig)
        var raw = [UInt8](repeating: 0, count: 2 * halfLength)
        let ok = raw.withUnsafeMutableBufferPointer { buffer in
            BN_is_negative(r) == 0 && BN_is_negative(s) == 0
                && BN_bn2binpad(r, buffer.baseAddress, Int32(halfLength)) == Int32(halfLength)
                && BN_bn2binpad(s, buffer.baseAddress! + halfLength, Int32(halfLength)) == Int32(halfLength)
        }
        guard ok else {
            ERR_clear_error()
            throw .malformedDER
        }
        return raw
    }
}
