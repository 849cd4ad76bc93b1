internal import CLibcrypto
internal import COpenSSLShims

/// The P-256 checks and conversions that both key classes share. Every function here
/// borrows the `EVP_PKEY` it is given; none keeps or frees it.
enum P256Curve {
    /// Bytes of a field element (a coordinate) or a scalar.
    static let coordinateLength = 32

    /// Throws unless `pkey` is an EC key on the named curve P-256 (`prime256v1`).
    /// Keys with explicit curve parameters have no group name and are refused too.
    static func requireP256(_ pkey: OpaquePointer) throws(P256KeyError) {
        guard EVP_PKEY_is_a(pkey, "EC") == 1 else {
            ERR_clear_error()
            throw .unsupportedKey("not an EC key")
        }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME, &name, name.count, &length) == 1 else {
            ERR_clear_error()
            throw .unsupportedKey("EC key without a named curve")
        }
        let group = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard group == SN_X9_62_prime256v1 else { throw .unsupportedKey("curve \(group), not P-256") }
    }

    /// Throws unless the public point of `pkey` is a valid point of the group
    /// (on the curve, not infinity, right order).
    static func requireValidPublicPoint(_ pkey: OpaquePointer) throws(P256KeyError) {
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else {
            throw .openSSL(.drain("EVP_PKEY_CTX_new_from_pkey"))
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_public_check(ctx) == 1 else {
            ERR_clear_error()
            throw .unsupportedKey("the public point is not a valid P-256 point")
        }
    }

    /// The affine coordinates of `pkey`'s public point, each left-padded to 32 bytes.
    static func coordinates(of pkey: OpaquePointer) throws(P256KeyError) -> (x: [UInt8], y: [UInt8]) {
        (try coordinate(OSSL_PKEY_PARAM_EC_PUB_X, of: pkey), try coordinate(OSSL_PKEY_PARAM_EC_PUB_Y, of: pkey))
    }

    private static func coordinate(_ name: String, of pkey: OpaquePointer) throws(P256KeyError) -> [UInt8] {
        var bn: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pkey, name, &bn) == 1, let bn else {
            throw .openSSL(.drain("EVP_PKEY_get_bn_param(\(name))"))
        }
        defer { BN_free(bn) }
        var out = [UInt8](repeating: 0, count: coordinateLength)
        guard BN_bn2binpad(bn, &out, Int32(coordinateLength)) == Int32(coordinateLength) else {
            throw .openSSL(.drain("BN_bn2binpad"))
        }
        return out
    }

    /// A new public-only `EVP_PKEY` for the point (x, y); the caller owns it.
    /// Fails with `.unsupportedKey` when the point is not on the curve.
    static func makePublicKey(x: [UInt8], y: [UInt8]) throws(P256KeyError) -> OpaquePointer {
        guard x.count == coordinateLength, y.count == coordinateLength else {
            throw .malformed("P-256 coordinates must be 32 bytes each (got \(x.count) and \(y.count))")
        }
        var point: [UInt8] = [0x04] + x + y // SEC1 uncompressed point
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw .openSSL(.drain("EVP_PKEY_CTX_new_from_name"))
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_fromdata_init(ctx) == 1 else { throw .openSSL(.drain("EVP_PKEY_fromdata_init")) }
        var pkey: OpaquePointer?
        let result = point.withUnsafeMutableBytes { pointBytes in
            var params = [
                OSSL_PARAM_construct_utf8_string(ParameterNames.groupName, ParameterNames.p256, 0),
                OSSL_PARAM_construct_octet_string(ParameterNames.publicKey, pointBytes.baseAddress, pointBytes.count),
                OSSL_PARAM_construct_end(),
            ]
            return EVP_PKEY_fromdata(ctx, &pkey, stepsign_EVP_PKEY_PUBLIC_KEY(), &params)
        }
        guard result == 1, let pkey else {
            // fromdata decodes the point with EC_POINT_oct2point, which refuses off-curve points.
            ERR_clear_error()
            throw .unsupportedKey("(x, y) is not a point on P-256")
        }
        do throws(P256KeyError) {
            try requireValidPublicPoint(pkey)
        } catch {
            EVP_PKEY_free(pkey)
            throw error
        }
        return pkey
    }
}
