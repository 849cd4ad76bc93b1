#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import StepSignProtocol

/// JSON Web Signature (RFC 7515) in compact serialization, ES256 only.
public enum JWS {
    /// The longest compact JWS `parse` reads (1 MiB); longer input is refused unread.
    public static let maximumLength = 1 << 20

    /// `BASE64URL(headerJSON) "." BASE64URL(payload) "." BASE64URL(signature)`, signed with
    /// ES256 by `key`. `headerJSON` is used byte for byte; the caller makes it say ES256.
    public static func signES256(headerJSON: [UInt8], payload: [UInt8], key: P256PrivateKey) throws(OpenSSLError) -> String {
        let headerLength = Base64URL.encodedLength(headerJSON.count)
        let inputLength = headerLength + 1 + Base64URL.encodedLength(payload.count)
        let signatureLength = Base64URL.encodedLength(2 * ECDSASignature.halfLength)
        // The text is written once, into the string's own storage: the signing input, then
        // (once it is signed) the signature. No intermediate arrays (issue 43).
        do {
            return try String(unsafeUninitializedCapacity: inputLength + 1 + signatureLength) { text in
                let base = text.baseAddress!
                headerJSON.withUnsafeBufferPointer { _ = Base64URL.encode($0, into: base) }
                base[headerLength] = UInt8(ascii: ".")
                payload.withUnsafeBufferPointer { _ = Base64URL.encode($0, into: base + headerLength + 1) }
                let signature = try key.signatureES256(for: UnsafeBufferPointer(start: base, count: inputLength))
                guard signature.count == 2 * ECDSASignature.halfLength else {
                    throw OpenSSLError(operation: "EVP_PKEY_sign", queue: ["an ES256 signature of \(signature.count) bytes"])
                }
                base[inputLength] = UInt8(ascii: ".")
                signature.withUnsafeBufferPointer { _ = Base64URL.encode($0, into: base + inputLength + 1) }
                return inputLength + 1 + signatureLength
            }
        } catch let error as OpenSSLError {
            throw error
        } catch {
            throw OpenSSLError(operation: "EVP_PKEY_sign", queue: ["\(error)"])
        }
    }

    /// Splits and decodes a compact JWS. Surrounding whitespace is not accepted; every part
    /// must be strict base64url; the header must be a JSON object with a string `alg` and no
    /// member named twice (the protocol's strict ``JSONParser`` reads it first). Does not check the signature.
    public static func parse(_ compact: String) throws(JWSError) -> CompactJWS {
        let text = Array(compact.utf8)
        guard text.count <= maximumLength else { throw .malformed("longer than \(maximumLength) bytes") }
        let parts = text.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("expected 3 dot-separated parts, found \(parts.count)") }
        guard !parts[0].isEmpty else { throw .malformed("empty header") }
        guard let headerJSON = Base64URL.decode(ascii: parts[0]) else { throw .malformed("header is not base64url") }
        guard let payload = Base64URL.decode(ascii: parts[1]) else { throw .malformed("payload is not base64url") }
        guard let signature = Base64URL.decode(ascii: parts[2]) else { throw .malformed("signature is not base64url") }
        do {
            _ = try JSONParser.parse(headerJSON)
        } catch {
            if let name = error.duplicateMember { throw .duplicateHeaderMember(name) }
            throw .invalidHeader("not a JSON object with a string alg")
        }
        let header: JWSHeader
        do {
            header = try JSONDecoder().decode(JWSHeader.self, from: Data(headerJSON))
        } catch {
            throw .invalidHeader("not a JSON object with a string alg")
        }
        let signingInput = Array(text[..<(parts[0].count + 1 + parts[1].count)])
        return CompactJWS(header: header, headerJSON: headerJSON, payload: payload,
                          signature: signature, signingInput: signingInput)
    }
}
