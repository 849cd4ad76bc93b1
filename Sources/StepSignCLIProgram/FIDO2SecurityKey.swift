import CLibfido2
import Foundation
import StepSignCrypto
import StepSignProtocol

/// A FIDO2 security key attached to this host, through libfido2 (SPEC §5.7): makes the
/// credential that `stepsign device enroll --fido2` registers, and the assertions that answer
/// a step-up, always with user presence and user verification (the key's PIN or biometric).
final class FIDO2SecurityKey {
    /// The exit status when no security key is attached (sysexits' EX_UNAVAILABLE).
    static let unavailable: Int32 = 69

    private let device: OpaquePointer
    let path: String

    /// The security key `path` names (`--fido2-device`: a hidraw device, or `unix:PATH`, a
    /// software authenticator on a Unix socket), or without one the first key libfido2 finds;
    /// a clear error (exit 69) when there is none or it cannot be opened.
    static func open(_ path: String?) throws -> FIDO2SecurityKey {
        guard let path else { return try first() }
        fido_init(0)
        return try open(path: path)
    }

    /// The first security key libfido2 finds; a clear error (exit 69) when there is none.
    static func first() throws -> FIDO2SecurityKey {
        fido_init(0)
        guard let list = fido_dev_info_new(16) else { throw CLIError("libfido2 could not allocate a device list") }
        var list_ = Optional(list)
        defer { fido_dev_info_free(&list_, 16) }
        var found = 0
        let status = fido_dev_info_manifest(list, 16, &found)
        guard status == FIDO_OK, found > 0, let info = fido_dev_info_ptr(list, 0), let cPath = fido_dev_info_path(info) else {
            throw CLIError("no FIDO2 security key found: plug one in and try again (or answer with the password)",
                           exitCode: unavailable)
        }
        return try open(path: String(cString: cPath))
    }

    private static func open(path: String) throws -> FIDO2SecurityKey {
        guard let device = fido_dev_new() else { throw CLIError("libfido2 could not allocate a device") }
        var opened = FIDO_OK
        if path.hasPrefix(FIDO2UnixSocketTransport.prefix) {
            var functions = FIDO2UnixSocketTransport.functions
            opened = fido_dev_set_io_functions(device, &functions)
        }
        if opened == FIDO_OK { opened = fido_dev_open(device, path) }
        guard opened == FIDO_OK else {
            var device_ = Optional(device)
            fido_dev_free(&device_)
            throw CLIError("cannot open the security key \(path): \(Self.describe(opened))", exitCode: unavailable)
        }
        return FIDO2SecurityKey(device: device, path: path)
    }

    private init(device: OpaquePointer, path: String) {
        self.device = device
        self.path = path
    }

    deinit {
        fido_dev_close(device)
        var device_ = Optional(device)
        fido_dev_free(&device_)
    }

    /// A new ES256 credential for `rpID` and `user`, with user verification: its COSE key,
    /// credential ID, and packed attestation when the key gives one (the `attestation` member
    /// of `enrollDeviceKey`'s `fido2`, which `fido2_attestation = "direct"` checks).
    func makeCredential(rpID: String, user: String, pin: () throws -> String?) throws
        -> (cose: [UInt8], credentialID: [UInt8], attestation: JSONValue?)
    {
        guard let cred = fido_cred_new() else { throw CLIError("libfido2 could not allocate a credential") }
        var cred_ = Optional(cred)
        defer { fido_cred_free(&cred_) }
        let userID = Array(SHA256.hash(Array(user.utf8)))
        let clientDataHash = try SecureRandom.bytes(count: 32)
        try check(fido_cred_set_type(cred, COSE_ES256), "set the credential type")
        try check(fido_cred_set_rp(cred, rpID, "stepsign"), "set the relying party")
        try check(fido_cred_set_user(cred, userID, userID.count, user, user, nil), "set the user")
        try check(fido_cred_set_clientdata_hash(cred, clientDataHash, clientDataHash.count), "set the client data hash")
        try check(fido_cred_set_uv(cred, FIDO_OPT_TRUE), "ask for user verification")
        FileHandle.standardError.write(Data("Touch the security key \(path) to make a credential for \(rpID).\n".utf8))
        try withPIN(pin) { fido_dev_make_cred(device, cred, $0) }
        guard let pointer = fido_cred_pubkey_ptr(cred), fido_cred_pubkey_len(cred) == 64,
              let idPointer = fido_cred_id_ptr(cred), fido_cred_id_len(cred) > 0
        else { throw CLIError("the security key made no ES256 credential") }
        let point = Array(UnsafeBufferPointer(start: pointer, count: 64))
        let credentialID = Array(UnsafeBufferPointer(start: idPointer, count: fido_cred_id_len(cred)))
        // COSE_Key {1: 2 (EC2), 3: -7 (ES256), -1: 1 (P-256), -2: x, -3: y}.
        let cose: [UInt8] = [0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20] + point[0..<32]
            + [0x22, 0x58, 0x20] + point[32..<64]
        var attestation: JSONValue?
        if let format = fido2_cred_fmt_string(cred), format == "packed",
           let authData = fido_cred_authdata_raw_ptr(cred), let sig = fido_cred_sig_ptr(cred), let x5c = fido_cred_x5c_ptr(cred) {
            let bytes = { (pointer: UnsafePointer<UInt8>, count: Int) in Base64URL.encode(Array(UnsafeBufferPointer(start: pointer, count: count))) }
            attestation = .object([
                ("fmt", .string(format)),
                ("authData", .string(bytes(authData, fido_cred_authdata_raw_len(cred)))),
                ("sig", .string(bytes(sig, fido_cred_sig_len(cred)))),
                ("x5c", .array([.string(bytes(x5c, fido_cred_x5c_len(cred)))])),
                ("clientDataHash", .string(Base64URL.encode(clientDataHash))),
            ])
        }
        return (cose, credentialID, attestation)
    }

    /// An assertion of credential `credentialID` over `clientDataHash`, with user presence and
    /// verification: the raw authenticatorData and the DER signature.
    func assertion(rpID: String, credentialID: [UInt8], clientDataHash: [UInt8], pin: () throws -> String?) throws
        -> (authenticatorData: [UInt8], signature: [UInt8])
    {
        guard let assert = fido_assert_new() else { throw CLIError("libfido2 could not allocate an assertion") }
        var assert_ = Optional(assert)
        defer { fido_assert_free(&assert_) }
        try check(fido_assert_set_rp(assert, rpID), "set the relying party")
        try check(fido_assert_set_clientdata_hash(assert, clientDataHash, clientDataHash.count), "set the client data hash")
        try check(fido_assert_allow_cred(assert, credentialID, credentialID.count), "name the credential")
        try check(fido_assert_set_up(assert, FIDO_OPT_TRUE), "ask for user presence")
        try check(fido_assert_set_uv(assert, FIDO_OPT_TRUE), "ask for user verification")
        FileHandle.standardError.write(Data("Touch the security key \(path) to approve.\n".utf8))
        try withPIN(pin) { fido_dev_get_assert(device, assert, $0) }
        guard fido_assert_count(assert) == 1, let dataPointer = fido_assert_authdata_ptr(assert, 0),
              let sigPointer = fido_assert_sig_ptr(assert, 0)
        else { throw CLIError("the security key gave no assertion") }
        let encoded = Array(UnsafeBufferPointer(start: dataPointer, count: fido_assert_authdata_len(assert, 0)))
        let signature = Array(UnsafeBufferPointer(start: sigPointer, count: fido_assert_sig_len(assert, 0)))
        return (try Self.unwrapByteString(encoded), signature)
    }

    /// libfido2 1.12 gives authenticatorData CBOR-encoded (a byte string): its content.
    static func unwrapByteString(_ bytes: [UInt8]) throws -> [UInt8] {
        guard let first = bytes.first, first >> 5 == 2 else { throw CLIError("malformed authenticatorData from libfido2") }
        let info = first & 0x1f
        let (length, start): (Int, Int) = switch info {
        case 0..<24: (Int(info), 1)
        case 24 where bytes.count >= 2: (Int(bytes[1]), 2)
        case 25 where bytes.count >= 3: (Int(bytes[1]) << 8 | Int(bytes[2]), 3)
        default: (-1, 0)
        }
        guard length >= 0, bytes.count == start + length else { throw CLIError("malformed authenticatorData from libfido2") }
        return Array(bytes[start...])
    }

    /// Runs `operation` without a PIN, and once more with one when the key wants it (a key
    /// with a biometric needs none). The PIN is never logged nor put in argv or the environment.
    private func withPIN(_ pin: () throws -> String?, _ operation: (UnsafePointer<CChar>?) -> Int32) throws {
        var status = operation(nil)
        if status == FIDO_ERR_PIN_REQUIRED || status == FIDO_ERR_UV_BLOCKED || status == FIDO_ERR_UNSUPPORTED_OPTION {
            guard let given = try pin() else { throw CLIError("the security key needs its PIN and there is no terminal to ask on") }
            status = given.withCString { operation($0) }
        }
        try check(status, "use the security key")
    }

    private func check(_ status: Int32, _ what: String) throws {
        guard status == FIDO_OK else { throw CLIError("cannot \(what): \(Self.describe(status))") }
    }

    private func fido2_cred_fmt_string(_ cred: OpaquePointer) -> String? {
        fido_cred_fmt(cred).map { String(cString: $0) }
    }

    static func describe(_ status: Int32) -> String {
        guard let text = fido_strerr(status) else { return "libfido2 error \(status)" }
        return String(cString: text)
    }
}
