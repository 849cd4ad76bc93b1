#if canImport(Glibc)
import Glibc
#endif
import StepSignCrypto
import StepSignTestSupport
import Testing

/// Keys in a PKCS#11 token (SPEC §5.7), against a real SoftHSM2 token: made inside the token,
/// signing ES256 and Ed25519 signatures that verify with the public half, never exported.
/// Serialized: SoftHSM2 is initialised once per process and reads its configuration then.
@Suite(.serialized)
struct PKCS11TokenTests {
    @Test func aP256KeyMadeInTheTokenSignsLowSES256SignaturesThatVerify() throws {
        let softHSM = try SoftHSMToken()
        defer { softHSM.remove() }
        softHSM.useInThisProcess()
        let token = try PKCS11Token(modulePath: SoftHSMToken.modulePath, label: softHSM.label, pin: Array(softHSM.pin.utf8),
                                    maxSessions: 2)
        let key = try token.generateP256Key(id: [1, 2, 3, 4], label: "stepsign test")
        #expect(key.tokenID == [1, 2, 3, 4])
        for index in 0..<20 {
            let message = Array("message \(index)".utf8)
            let signature = try key.signatureES256(for: message)
            #expect(signature.count == 64)
            #expect(ECDSALowS.isLowS(signature))
            #expect(key.publicKey.isValidSignatureES256(signature, for: message))
        }
        // The same key, found again by its CKA_ID.
        let again = try token.p256Key(id: [1, 2, 3, 4])
        #expect(again.publicKey.thumbprint == key.publicKey.thumbprint)
        #expect(throws: OpenSSLError.self) { try key.pkcs8PEM() }
        #expect(token.openSessions <= 2)
    }

    @Test func anEd25519KeyMadeInTheTokenSignsWhatItsPublicKeyVerifies() throws {
        let softHSM = try SoftHSMToken()
        defer { softHSM.remove() }
        softHSM.useInThisProcess()
        let token = try PKCS11Token(modulePath: SoftHSMToken.modulePath, label: softHSM.label, pin: Array(softHSM.pin.utf8),
                                    maxSessions: 1)
        #expect(token.supportsEd25519)
        let key = try token.generateEd25519Key(id: [9], label: "log key")
        let message = Array("checkpoint".utf8)
        let signature = try key.signature(for: message)
        #expect(key.publicKey.isValidSignature(signature, for: message))
    }

    @Test func aTokenThatStopsAnsweringFailsTheSignatureAndIsOpenedAgainWhenItIsBack() throws {
        let softHSM = try SoftHSMToken()
        defer { softHSM.remove() }
        softHSM.useInThisProcess()
        let token = try PKCS11Token(modulePath: SoftHSMToken.modulePath, label: softHSM.label, pin: Array(softHSM.pin.utf8),
                                    maxSessions: 2)
        let key = try token.generateP256Key(id: [7], label: "stepsign test")
        _ = try key.signatureES256(for: Array("before".utf8))
        // The token's store goes away (an unplugged token, as SoftHSM2 sees it).
        let tokens = softHSM.directory.appending("tokens")
        let away = softHSM.directory.appending("away")
        #expect(rename(tokens, away) == 0)
        #expect(throws: OpenSSLError.self) { try key.signatureES256(for: Array("while away".utf8)) }
        #expect(token.openSessions == 0, "its sessions are closed")
        #expect(rename(away, tokens) == 0)
        let message = Array("after".utf8)
        let signature = try key.signatureES256(for: message)
        #expect(key.publicKey.isValidSignatureES256(signature, for: message))
    }

    @Test func aP256KeyMadeInASoftwareTPMThroughTPM2PKCS11SignsES256WhileEd25519IsNotOffered() throws {
        let tpm = try SoftwareTPMToken()
        defer { tpm.remove() }
        tpm.useInThisProcess()
        let token = try PKCS11Token(modulePath: SoftwareTPMToken.modulePath, label: tpm.label, pin: Array(tpm.pin.utf8),
                                    maxSessions: 2)
        #expect(!token.supportsEd25519, "tpm2-pkcs11 makes no Ed25519 keys: the log key stays a file")
        let key = try token.generateP256Key(id: [5, 5], label: "stepsign test")
        for index in 0..<3 {
            let message = Array("tpm \(index)".utf8)
            let signature = try key.signatureES256(for: message)
            #expect(ECDSALowS.isLowS(signature))
            #expect(key.publicKey.isValidSignatureES256(signature, for: message))
        }
        #expect(try token.p256Key(id: [5, 5]).publicKey.thumbprint == key.publicKey.thumbprint)
    }

    @Test func aWrongPINAMissingModuleOrUnknownTokenFailsAtOnceWithoutThePIN() throws {
        let softHSM = try SoftHSMToken()
        defer { softHSM.remove() }
        softHSM.useInThisProcess()
        do {
            _ = try PKCS11Token(modulePath: SoftHSMToken.modulePath, label: softHSM.label, pin: Array("wrong-pin".utf8),
                                maxSessions: 1)
            Issue.record("a wrong PIN was accepted")
        } catch {
            #expect(error.isPINRefused)
            #expect(!error.description.contains("wrong-pin"))
        }
        #expect(throws: PKCS11Error.self) {
            try PKCS11Token(modulePath: "/nonexistent/libpkcs11.so", label: "", pin: [1], maxSessions: 1)
        }
        do {
            _ = try PKCS11Token(modulePath: SoftHSMToken.modulePath, label: "no such token", pin: Array(softHSM.pin.utf8),
                                maxSessions: 1)
            Issue.record("an unknown token label was accepted")
        } catch {
            #expect(error.description.contains("no such token"))
        }
    }
}
