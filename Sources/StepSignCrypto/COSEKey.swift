/// A COSE_Key (RFC 9052 §7, RFC 9053 §2.1) of a FIDO2 credential, as `authenticatorMakeCredential`
/// returns it: a CBOR map with `kty` (1) = EC2 (2), `alg` (3) = ES256 (-7), `crv` (-1) = P-256
/// (1), and the point's `x` (-2) and `y` (-3), 32 bytes each.
///
/// Only that one shape is read: a small, strict reader of definite-length CBOR (integers and
/// byte strings in one map), so that a security key's public key needs no CBOR library in the
/// daemon. Anything else (other key types, indefinite lengths, trailing bytes, duplicate
/// labels) is refused.
public enum COSEKey {
    /// The P-256 public key of a COSE ES256 key.
    public static func es256PublicKey(_ bytes: [UInt8]) throws(P256KeyError) -> P256PublicKey {
        var reader = Reader(bytes: bytes)
        let fields = try reader.map()
        guard reader.atEnd else { throw .malformed("bytes after the COSE key") }
        guard fields[1] == .int(2) else { throw .unsupportedKey("COSE kty is not EC2") }
        guard fields[3] == .int(-7) else { throw .unsupportedKey("COSE alg is not ES256") }
        guard fields[-1] == .int(1) else { throw .unsupportedKey("COSE crv is not P-256") }
        guard case let .bytes(x)? = fields[-2], case let .bytes(y)? = fields[-3], x.count == 32, y.count == 32 else {
            throw .malformed("COSE x and y must be 32-byte strings")
        }
        return try P256PublicKey(x: x, y: y)
    }

    enum Value: Equatable {
        case int(Int64)
        case bytes([UInt8])
    }

    struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var atEnd: Bool { offset == bytes.count }

        mutating func byte() throws(P256KeyError) -> UInt8 {
            guard offset < bytes.count else { throw .malformed("COSE key cut short") }
            defer { offset += 1 }
            return bytes[offset]
        }

        /// A head's major type and argument (definite lengths only).
        mutating func head() throws(P256KeyError) -> (major: UInt8, argument: UInt64) {
            let initial = try byte()
            let info = initial & 0x1f
            var argument: UInt64
            switch info {
            case 0..<24: argument = UInt64(info)
            case 24, 25, 26, 27:
                argument = 0
                for _ in 0..<(1 << (info - 24)) { argument = argument << 8 | UInt64(try byte()) }
            default: throw .malformed("COSE key uses an indefinite or reserved length")
            }
            return (initial >> 5, argument)
        }

        mutating func value() throws(P256KeyError) -> Value {
            let (major, argument) = try head()
            switch major {
            case 0:
                guard argument <= UInt64(Int64.max) else { throw .malformed("COSE integer out of range") }
                return .int(Int64(argument))
            case 1:
                guard argument < UInt64(Int64.max) else { throw .malformed("COSE integer out of range") }
                return .int(-1 - Int64(argument))
            case 2:
                guard argument <= UInt64(bytes.count - offset) else { throw .malformed("COSE key cut short") }
                defer { offset += Int(argument) }
                return .bytes(Array(bytes[offset..<offset + Int(argument)]))
            default:
                throw .malformed("unexpected CBOR item in a COSE key")
            }
        }

        mutating func map() throws(P256KeyError) -> [Int64: Value] {
            let (major, count) = try head()
            guard major == 5, count <= 16 else { throw .malformed("a COSE key is a CBOR map") }
            var fields: [Int64: Value] = [:]
            for _ in 0..<count {
                guard case let .int(label) = try value() else { throw .malformed("COSE labels are integers") }
                guard fields[label] == nil else { throw .malformed("COSE label \(label) twice") }
                fields[label] = try value()
            }
            return fields
        }
    }
}
