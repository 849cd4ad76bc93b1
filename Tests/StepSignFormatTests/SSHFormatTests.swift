import Foundation
import StepSignCrypto
import StepSignFormat
import Testing

/// The SSH encodings of SPEC §3.5: OpenSSH's PROTOCOL.sshsig signed data, the
/// `ecdsa-sha2-nistp256` key blob and signature (RFC 5656), and the `ssh` claim.
@Suite("SSH formats")
struct SSHFormatTests {
    /// The signed data `ssh-keygen -Y sign -n git` sends for a message hashed with SHA-512.
    private func blob(namespace: String = "git", reserved: [UInt8] = [], algorithm: String = "sha512", hash: [UInt8]? = nil) -> [UInt8] {
        var writer = SSHWireWriter()
        for byte in Array("SSHSIG".utf8) { writer.byte(byte) }
        writer.string(namespace)
        writer.string(reserved)
        writer.string(algorithm)
        writer.string(hash ?? [UInt8](repeating: 0xAB, count: algorithm == "sha256" ? 32 : 64))
        return writer.bytes
    }

    @Test("SSHSIG signed data parses field by field and writes back the same bytes")
    func signedDataRoundTrips() throws {
        let parsed = try #require(SSHSignedData(parsing: blob()))
        #expect(parsed.namespace == "git" && parsed.hashAlgorithm == "sha512" && parsed.hash.count == 64 && parsed.reserved.isEmpty)
        #expect(parsed.bytes == blob())
        #expect(SSHSignedData(parsing: blob(algorithm: "sha256"))?.hashAlgorithm == "sha256")
    }

    @Test("anything but one SSHSIG blob is refused: other magic, unknown hash, wrong hash length, trailing bytes, short")
    func signedDataRefusesTheRest() {
        var otherMagic = blob()
        otherMagic[0] = UInt8(ascii: "X")
        #expect(SSHSignedData(parsing: otherMagic) == nil)
        #expect(SSHSignedData(parsing: blob(algorithm: "md5", hash: [1, 2])) == nil)
        #expect(SSHSignedData(parsing: blob(algorithm: "sha512", hash: [UInt8](repeating: 1, count: 32))) == nil)
        #expect(SSHSignedData(parsing: blob() + [0]) == nil)
        #expect(SSHSignedData(parsing: Array(blob().dropLast())) == nil)
        #expect(SSHSignedData(parsing: blob(namespace: "")) == nil)
        #expect(SSHSignedData(parsing: blob(namespace: "a b")) == nil)
        // An SSH login's session data (RFC 4252 §7) starts with the session ID's length.
        #expect(SSHSignedData(parsing: [0, 0, 0, 32] + [UInt8](repeating: 7, count: 32) + [50]) == nil)
    }

    @Test("a length that lies is an error, never a read past the end")
    func readerIsBounded() {
        var reader = SSHWireReader([0xFF, 0xFF, 0xFF, 0xFF, 1])
        #expect(reader.string() == nil)
        #expect(reader.uint32() == 0xFFFF_FFFF)
        #expect(reader.byte() == 1 && reader.isAtEnd && reader.byte() == nil)
    }

    @Test("mpint: leading zeros dropped, a zero byte before a set top bit, zero as empty (RFC 4251 §5)")
    func mpint() {
        func encoded(_ bytes: [UInt8]) -> [UInt8] {
            var writer = SSHWireWriter()
            writer.mpint(bytes)
            return writer.bytes
        }
        #expect(encoded([0, 0]) == [0, 0, 0, 0])
        #expect(encoded([0, 0x12, 0x34]) == [0, 0, 0, 2, 0x12, 0x34])
        #expect(encoded([0x80, 1]) == [0, 0, 0, 3, 0, 0x80, 1])
    }

    @Test("the key blob and line are OpenSSH's, and the signature blob carries r and s as mpints")
    func keyAndSignature() throws {
        let key = try P256PrivateKey.generate()
        var reader = SSHWireReader(SSHPublicKey.blob(key.publicKey))
        #expect(reader.string() == Array("ecdsa-sha2-nistp256".utf8))
        #expect(reader.string() == Array("nistp256".utf8))
        #expect(reader.string() == [4] + key.publicKey.x + key.publicKey.y)
        #expect(reader.isAtEnd)
        let line = SSHPublicKey.line(key.publicKey, comment: "kid")
        #expect(line == "ecdsa-sha2-nistp256 \(Base64.encode(SSHPublicKey.blob(key.publicKey))) kid")

        let data = blob()
        let raw = try key.signatureES256(for: data)
        var signature = SSHWireReader(SSHPublicKey.signatureBlob(rawES256: raw))
        #expect(signature.string() == Array("ecdsa-sha2-nistp256".utf8))
        let innerBytes = signature.string()
        var inner = SSHWireReader(try #require(innerBytes))
        let rBytes = inner.string(), sBytes = inner.string()
        let r = try #require(rBytes), s = try #require(sBytes)
        #expect(inner.isAtEnd && signature.isAtEnd)
        func fixed(_ mpint: [UInt8]) -> [UInt8] {
            let magnitude = Array(mpint.drop(while: { $0 == 0 }))
            return [UInt8](repeating: 0, count: 32 - magnitude.count) + magnitude
        }
        #expect(r.first.map { $0 & 0x80 == 0 } ?? true && s.first.map { $0 & 0x80 == 0 } ?? true)
        #expect(key.publicKey.isValidSignatureES256(fixed(r) + fixed(s), for: data))
    }

    @Test("the ssh claim is written after the others, as {namespace, hashAlgorithm, hash}")
    func sshClaim() throws {
        let claims = SignatureClaims(iss: "i", sub: "u", jti: "j", iat: 1, payload: "p", payloadLength: 1, reason: "r",
                                     authLevel: 1, authenticatorType: 0, authenticatorUsed: "password",
                                     stepUp: StepUpClaim(reusedFrom: "x"),
                                     ssh: SSHClaim(namespace: "git", hashAlgorithm: "sha512", hash: "ab"))
        let text = String(decoding: claims.jsonBytes, as: UTF8.self)
        #expect(text.hasSuffix(#""stepUp":{"reusedFrom":"x"},"ssh":{"namespace":"git","hashAlgorithm":"sha512","hash":"ab"}}"#))
        #expect(try JSONDecoder().decode(SignatureClaims.self, from: Data(claims.jsonBytes)) == claims)
    }
}
