import Foundation
import StepSignProtocol
import StepSignClient
import StepSignCrypto
import StepSignFormat
import Testing

/// LDA device keys: enrolment, and the (1,0) step-up they answer (SPEC §3.2,
/// docs/flows.md "Strong authenticators / Device keys (LDA)").
@Suite("Device keys (LDA)", .blocking)
struct DeviceKeyTests {
    // MARK: Enrolment

    @Test("enrollDeviceKey when logged in answers the RFC 7638 thumbprint, for PEM, a JWK object and a JWK string",
          arguments: ["pem", "jwk object", "jwk string"])
    func enrollWhenLoggedIn(form: String) throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        try connection.requireLogin()
        let device = try TestDevice()
        let publicKey: JSONValue = switch form {
        case "pem": .string(device.pem)
        case "jwk object": device.jwkObject
        default: .string(device.jwkString)
        }
        let reply = try connection.call("enrollDeviceKey", ["publicKey": publicKey, "label": "phone"])
        #expect(reply.code == 0, "\(reply.message)")
        #expect(reply.events.isEmpty)
        #expect(reply.result?["deviceKeyId"]?.stringValue == device.kid)
        #expect(try daemon.userRow()?["deviceKeys"]?.arrayValue?.compactMap(\.stringValue) == [device.kid])
    }

    @Test("enrollDeviceKey without a login is error 11 and enrols nothing")
    func enrollNotLoggedIn() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let reply = try daemon.connect().enrollDevice(try TestDevice())
        #expect(reply.code == 11)
        #expect(reply.result?["deviceKeyId"] == nil)
        #expect(try daemon.userRow()?["deviceKeys"]?.arrayValue?.compactMap(\.stringValue) == [])
    }

    @Test("admin.enrollDeviceKey answers the kid, admin.listUsers shows it, admin.revokeDeviceKey removes it")
    func adminEnrollAndRevoke() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let admin = try daemon.connect()
        let device = try TestDevice()
        let kid = try admin.adminEnroll(device)
        #expect(kid == device.kid)
        #expect(try daemon.userRow()?["deviceKeys"]?.arrayValue?.compactMap(\.stringValue) == [kid])

        let revoked = try admin.call("admin.revokeDeviceKey", ["user": "alice", "deviceKeyId": kid])
        #expect(revoked.code == 0)
        #expect(revoked.result?.members?.isEmpty == true)
        #expect(try daemon.userRow()?["deviceKeys"]?.arrayValue?.compactMap(\.stringValue) == [])
        // A revoked key is not challenged: (1,0) is back to the password.
        #expect(try daemon.connect().requestLevel1().eventNames == ["getPassword"])
    }

    @Test("a key that is not a P-256 public key is error 4",
          arguments: ["garbage", "P-384 PEM", "secp256k1 PEM", "Ed25519 PEM", "P-256 JWK off the curve", "RSA JWK", "empty"])
    func enrollBadKey(kind: String) throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        try connection.requireLogin()
        let publicKey: JSONValue = switch kind {
        case "garbage": "not a key at all"
        case "P-384 PEM": .string(BadKeys.p384)
        case "secp256k1 PEM": .string(BadKeys.secp256k1)
        case "Ed25519 PEM": .string(BadKeys.ed25519)
        case "P-256 JWK off the curve":
            ["kty": "EC", "crv": "P-256", "x": .string(Base64URL.encode([UInt8](repeating: 1, count: 32))),
             "y": .string(Base64URL.encode([UInt8](repeating: 2, count: 32)))]
        case "RSA JWK": ["kty": "RSA", "n": "sXch", "e": "AQAB"]
        default: ""
        }
        let reply = try connection.call("enrollDeviceKey", ["publicKey": publicKey, "label": "phone"])
        #expect(reply.code == 4, "\(reply.message)")
        #expect(try daemon.userRow()?["deviceKeys"]?.arrayValue?.compactMap(\.stringValue) == [])
    }

    @Test("lda.enabled = false: enrollDeviceKey and admin.enrollDeviceKey are error 170")
    func enrollWhenLDADisabled() throws {
        let daemon = try DaemonHarness(config: "[lda]\nenabled = false")
        try daemon.addUser()
        let connection = try daemon.connect()
        try connection.requireLogin()
        #expect(try connection.enrollDevice(try TestDevice()).code == 170)
        let admin = try daemon.connect().call("admin.enrollDeviceKey",
                                              ["user": "alice", "publicKey": try TestDevice().pem, "label": "x"])
        #expect(admin.code == 170)
        #expect(try daemon.userRow()?["deviceKeys"]?.arrayValue?.compactMap(\.stringValue) == [])
    }

    @Test("a key enrolled with LDA on is never challenged after a restart with lda.enabled = false: (1,0) asks for the password")
    func ldaTurnedOffAfterEnrolment() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        try daemon.connect().adminEnroll(try TestDevice())
        #expect(try daemon.connect().requestLevel1().eventNames == ["getLDASignature"])

        daemon.stop()
        try DaemonHarness.config("[lda]\nenabled = false").write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        try daemon.start()
        let connection = try daemon.connect()
        let challenge = try connection.requestLevel1()
        #expect(challenge.eventNames == ["getPassword"])
        #expect(challenge.int("challengeMode", of: "getPassword") == 12)
        let signed = try connection.setPassword(Passwords.initial, mode: 12)
        #expect(signed.signingDetails?["authenticatorUsed"]?.stringValue == "password")
        #expect(try connection.setLDASignature(kid: "x", signature: "AAAA").code == 11)
    }

    // MARK: (1,0) with a device key

    @Test("(1,0) with a device key asks getLDASignature (not getPassword): mode 12, attempts, status 100, the kid")
    func levelOneAsksTheDevice() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let device = try TestDevice()
        try daemon.connect().adminEnroll(device)
        let reply = try daemon.connect().requestLevel1()
        #expect(reply.code == 0)
        #expect(reply.eventNames == ["getLDASignature"])
        #expect(reply.string("user", of: "getLDASignature") == "alice")
        #expect(reply.int("challengeMode", of: "getLDASignature") == 12)
        #expect(reply.int("attemptsLeft", of: "getLDASignature") == 3)
        #expect(reply.statusCode(of: "getLDASignature") == 100)
        #expect(reply.deviceKeys == [device.kid])
    }

    @Test("the challenge is exactly the 8 lines: version v2, nonce, user, SHA-256 hex of the payload, reason, comm, pid, uid")
    func challengeText() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        try daemon.connect().adminEnroll(try TestDevice())
        let payload = "pay 10 EUR to bob — café ✓"
        let reply = try daemon.connect().requestLevel1(payload: payload, reason: "payment to bob")
        let challenge = try #require(reply.string("challenge", of: "getLDASignature"))
        let bytes = try #require(Base64URL.decode(challenge))
        #expect(bytes.last != 0x0A, "no trailing newline")
        let text = try LDAChallengeText(reply)
        #expect(text.lines.count == 8)
        #expect(text.lines[0] == "stepsign-lda-v2")
        let nonce = text.nonce
        #expect(nonce.count >= 22, "a nonce of at least 128 bits")
        #expect(Base64URL.decode(nonce) != nil)
        #expect(text == LDAChallengeText.expected(nonce: nonce, user: "alice", payload: payload, reason: "payment to bob"))
        #expect(text.lines[3] == Hex.encode(SHA256.hash(Array(payload.utf8))))
        #expect(text.lines[5] == ProcessIdentity.comm)
        #expect(text.lines[6] == String(getpid()))
        // The uid is the kernel's (SO_PEERCRED), not something the peer chose like its name.
        #expect(text.lines.dropFirst(7).first == String(getuid()))
    }

    @Test("two challenges carry different nonces")
    func noncesDiffer() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        try daemon.connect().adminEnroll(try TestDevice())
        let first = try LDAChallengeText(try daemon.connect().requestLevel1())
        let second = try LDAChallengeText(try daemon.connect().requestLevel1())
        #expect(first.nonce != second.nonce)
    }

    @Test("a right device signature signs with authenticatorUsed lda; it verifies offline and getSignature names the peer")
    func rightSignatureSigns() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let device = try TestDevice()
        try daemon.connect().adminEnroll(device)
        let connection = try daemon.connect()
        let challenge = try connection.requestLevel1(payload: "pay 10 EUR to bob", reason: "payment")
        let result = try connection.answer(challenge, with: device)
        #expect(result.code == 0, "\(result.message)")
        #expect(result.eventNames == ["onAuthenticateUserAndSignData"])
        #expect(result.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        let details = try #require(result.signingDetails)
        #expect(details["authenticatorUsed"]?.stringValue == "lda")
        #expect(details["authLevel"]?.int == 1)
        #expect(details["authenticatorType"]?.int == 0)
        #expect(details["dataPayload"]?.stringValue == "pay 10 EUR to bob")
        let jws = try #require(details["payloadSignature"]?.stringValue)
        let claims = try StepSignSignature.verify(jws, trustedKeys: try connection.trustedKeys())
        #expect(claims.sub == "alice")
        #expect(claims.authenticatorUsed == "lda")
        #expect(claims.payload == "pay 10 EUR to bob")

        let signatureID = try #require(details["dataSignatureID"]?.stringValue)
        let row = try connection.call("getSignature", ["signatureID": signatureID])
        #expect(row.code == 0, "\(row.message)")
        let peer = try #require(row.result?["peer"])
        #expect(peer["uid"]?.int == Int(getuid()))
        #expect(peer["pid"]?.int == Int(getpid()))
        #expect(peer["comm"]?.stringValue == ProcessIdentity.comm)
        #expect(row.result?["payloadSignature"]?.stringValue == jws)
    }

    // MARK: Refused device answers

    @Test("a signature by a key that is not enrolled: 102, attemptsLeft 2, a new challenge")
    func unenrolledKey() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let device = try TestDevice()
        try daemon.connect().adminEnroll(device)
        let connection = try daemon.connect()
        let challenge = try connection.requestLevel1()
        let stranger = try TestDevice()
        // The stranger signs the right bytes, once under its own kid and once claiming the enrolled kid.
        let own = try connection.answer(challenge, with: stranger)
        try expectRetry(own, after: challenge, attemptsLeft: 2)
        let claimed = try connection.setLDASignature(kid: device.kid,
                                                     signature: try stranger.sign(try LDAChallengeText(own).bytes))
        try expectRetry(claimed, after: own, attemptsLeft: 1)
    }

    @Test("a signature by a key revoked between challenge and answer: 102, and the new challenge lists only the other key")
    func revokedKeyBetweenChallengeAndAnswer() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let phone = try TestDevice(), laptop = try TestDevice()
        try daemon.connect().adminEnroll(phone)
        try daemon.connect().adminEnroll(laptop, label: "laptop")
        let connection = try daemon.connect()
        let challenge = try connection.requestLevel1()
        #expect(Set(challenge.deviceKeys ?? []) == [phone.kid, laptop.kid])

        let admin = try daemon.connect()
        #expect(try admin.call("admin.revokeDeviceKey", ["user": "alice", "deviceKeyId": phone.kid]).code == 0)
        let refused = try connection.answer(challenge, with: phone)
        try expectRetry(refused, after: challenge, attemptsLeft: 2)
        #expect(refused.deviceKeys == [laptop.kid])
        #expect(try connection.answer(refused, with: laptop).statusCode(of: "onAuthenticateUserAndSignData") == 100)
    }

    @Test("a signature by the only key, revoked between challenge and answer: 102, then the password (mode 12)")
    func revokedOnlyKeyFallsBackToPassword() throws {
        // flows.md is silent here; the engine falls back to getPassword mode 12 (Engine+Signing failStepUp).
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let device = try TestDevice()
        try daemon.connect().adminEnroll(device)
        let connection = try daemon.connect()
        let challenge = try connection.requestLevel1()
        #expect(try daemon.connect().call("admin.revokeDeviceKey", ["user": "alice", "deviceKeyId": device.kid]).code == 0)
        let refused = try connection.answer(challenge, with: device)
        #expect(refused.eventNames == ["getPassword"])
        #expect(refused.int("challengeMode", of: "getPassword") == 12)
        #expect(refused.statusCode(of: "getPassword") == 102)
        #expect(refused.int("attemptsLeft", of: "getPassword") == 2)
        let signed = try connection.setPassword(Passwords.initial, mode: 12)
        #expect(signed.signingDetails?["authenticatorUsed"]?.stringValue == "password")
    }

    @Test("a signature over other bytes (one line of the text changed) is refused with 102 and a new challenge",
          arguments: [(1, "nonce"), (2, "user"), (3, "payload"), (4, "reason"), (5, "comm"), (6, "pid")])
    func otherBytes(line: Int, name: String) throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        try daemon.addUser("bob", password: Passwords.second)
        let device = try TestDevice()
        try daemon.connect().adminEnroll(device)
        let connection = try daemon.connect()
        let challenge = try connection.requestLevel1(payload: "pay 10 EUR to bob", reason: "payment")
        let text = try LDAChallengeText(challenge)
        let other: String = switch name {
        case "nonce": Base64URL.encode(try SecureRandom.bytes(count: 16))
        case "user": "bob"
        case "payload": Hex.encode(SHA256.hash(Array("pay 10000 EUR to mallory".utf8)))
        case "reason": "refund"
        case "comm": "stepsign"
        default: String(getpid() + 1)
        }
        let forged = text.replacing(line: line, with: other)
        #expect(forged != text)
        let reply = try connection.setLDASignature(kid: device.kid, signature: try device.sign(forged.bytes))
        try expectRetry(reply, after: challenge, attemptsLeft: 2)
    }

    @Test("text with a trailing newline, or without the version line, is other bytes: 102",
          arguments: ["trailing newline", "no version line", "CRLF"])
    func otherFraming(kind: String) throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let device = try TestDevice()
        try daemon.connect().adminEnroll(device)
        let connection = try daemon.connect()
        let challenge = try connection.requestLevel1()
        let text = try LDAChallengeText(challenge)
        let bytes: [UInt8] = switch kind {
        case "trailing newline": text.bytes + [0x0A]
        case "no version line": Array(text.lines.dropFirst().joined(separator: "\n").utf8)
        default: Array(text.lines.joined(separator: "\r\n").utf8)
        }
        let reply = try connection.setLDASignature(kid: device.kid, signature: try device.sign(bytes))
        try expectRetry(reply, after: challenge, attemptsLeft: 2)
    }

    @Test("after a failed attempt, a signature over the previous challenge is a replay: 102")
    func replayOfPreviousChallenge() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let device = try TestDevice()
        try daemon.connect().adminEnroll(device)
        let connection = try daemon.connect()
        let first = try connection.requestLevel1()
        let goodForFirst = try device.answer(first)
        let failed = try connection.setLDASignature(kid: device.kid, signature: try TestDevice().sign(try LDAChallengeText(first).bytes))
        try expectRetry(failed, after: first, attemptsLeft: 2)
        let replay = try connection.call("setLDASignature", goodForFirst)
        try expectRetry(replay, after: failed, attemptsLeft: 1)
        // The current challenge still works.
        #expect(try connection.answer(replay, with: device).statusCode(of: "onAuthenticateUserAndSignData") == 100)
    }

    @Test("a signature over a challenge of another session is refused: 102")
    func challengeOfAnotherSession() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let device = try TestDevice()
        try daemon.connect().adminEnroll(device)
        let other = try daemon.connect()
        let otherChallenge = try other.requestLevel1()
        let connection = try daemon.connect()
        let challenge = try connection.requestLevel1()
        let reply = try connection.call("setLDASignature", try device.answer(otherChallenge))
        try expectRetry(reply, after: challenge, attemptsLeft: 2)
    }

    @Test("a malformed signature (truncated, padded, 65 bytes, DER, empty) is refused with 102, not accepted",
          arguments: ["truncated", "padded", "65 bytes", "DER", "empty", "high-S twin of another challenge"])
    func malformedSignature(kind: String) throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let device = try TestDevice()
        try daemon.connect().adminEnroll(device)
        let connection = try daemon.connect()
        let challenge = try connection.requestLevel1()
        let raw = try device.key.signatureES256(for: try LDAChallengeText(challenge).bytes)
        let good = Base64URL.encode(raw)
        let signature: String = switch kind {
        case "truncated": String(good.dropLast(4))
        case "padded": good + "=="
        case "65 bytes": Base64URL.encode(raw + [0])
        case "DER": Base64URL.encode(try ECDSASignature.derFromRaw(raw))
        case "empty": ""
        default:
            Base64URL.encode(SignatureMalleability.highSTwin(ofRaw: try device.key.signatureES256(for: Array("x".utf8))))
        }
        let reply = try connection.setLDASignature(kid: device.kid, signature: signature)
        try expectRetry(reply, after: challenge, attemptsLeft: 2)
    }

    @Test("the high-S twin (r, n−s) of the right signature is a valid ES256 signature of the challenge and signs")
    func highSTwinOfRightSignature() throws {
        // RFC 7518 and the engine accept high-S; the challenge is single-use, so the twin is not a replay.
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let device = try TestDevice()
        try daemon.connect().adminEnroll(device)
        let connection = try daemon.connect()
        let challenge = try connection.requestLevel1()
        let raw = try device.key.signatureES256(for: try LDAChallengeText(challenge).bytes)
        let twin = Base64URL.encode(SignatureMalleability.highSTwin(ofRaw: raw))
        let reply = try connection.setLDASignature(kid: device.kid, signature: twin)
        #expect(reply.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        // …and the original, now, answers no challenge.
        #expect(try connection.setLDASignature(kid: device.kid, signature: Base64URL.encode(raw)).code == 11)
    }

    @Test("three refused device answers: 102, 102, then 153 with an empty signature; the user is blocked")
    func exhaustedBlocks() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let device = try TestDevice()
        try daemon.connect().adminEnroll(device)
        let connection = try daemon.connect()
        var reply = try connection.requestLevel1()
        var nonces = [try LDAChallengeText(reply).nonce]
        for left in [2, 1] {
            let next = try connection.setLDASignature(kid: device.kid, signature: try device.sign(Array("nope".utf8)))
            try expectRetry(next, after: reply, attemptsLeft: left)
            nonces.append(try LDAChallengeText(next).nonce)
            reply = next
        }
        #expect(Set(nonces).count == 3)
        let last = try connection.setLDASignature(kid: device.kid, signature: try device.sign(Array("nope".utf8)))
        #expect(last.eventNames == ["onAuthenticateUserAndSignData"])
        #expect(last.statusCode(of: "onAuthenticateUserAndSignData") == 153)
        #expect(last.signingDetails?["payloadSignature"]?.stringValue == "")
        #expect(try daemon.userRow()?["blocked"]?.boolValue == true)
        #expect(try connection.requestLevel1().code == 148)
        #expect(try connection.setLDASignature(kid: device.kid, signature: "AAAA").code == 11)
    }

    @Test("device failures and fallback password failures count on the stored counter: a new connection gets no fresh attempts")
    func sharedCounter() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let device = try TestDevice()
        try daemon.connect().adminEnroll(device)
        // One wrong fallback password on one connection (the device challenge answered with setPassword mode 12)…
        let fallback = try daemon.connect().signWithPassword(user: "alice", password: Passwords.wrong)
        #expect(fallback.int("attemptsLeft", of: "getPassword") == 2)
        // …one wrong device signature on another…
        let connection = try daemon.connect()
        let second = try connection.requestLevel1()
        #expect(second.int("attemptsLeft", of: "getLDASignature") == 2)
        let refused = try connection.setLDASignature(kid: device.kid, signature: try device.sign(Array("nope".utf8)))
        #expect(refused.int("attemptsLeft", of: "getLDASignature") == 1)
        // …and a third connection has one attempt left.
        #expect(try daemon.connect().requestLevel1().int("attemptsLeft", of: "getLDASignature") == 1)
    }

    @Test("a user blocked (by another session) between challenge and the right device signature is not signed for: 153, as with a password")
    func blockedMeanwhile() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let device = try TestDevice()
        try daemon.connect().adminEnroll(device)
        let connection = try daemon.connect()
        let challenge = try connection.requestLevel1()
        try BlockUser.byWrongLogins(daemon)
        let reply = try connection.answer(challenge, with: device)
        #expect(reply.statusCode(of: "onAuthenticateUserAndSignData") == 153, "\(reply.shape)")
        #expect(reply.signingDetails?["payloadSignature"]?.stringValue ?? "" == "")
        #expect(try daemon.connect().call("status").result?["signatures"]?.int == 0)
    }

    @Test("baseline: a user blocked between challenge and the right password is answered 153 and not signed for")
    func blockedMeanwhilePassword() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let connection = try daemon.connect()
        #expect(try connection.requestLevel1().eventNames == ["getPassword"])
        try BlockUser.byWrongLogins(daemon)
        let reply = try connection.setPassword(Passwords.initial, mode: 12)
        #expect(reply.statusCode(of: "onAuthenticateUserAndSignData") == 153, "\(reply.shape)")
        #expect(try daemon.connect().call("status").result?["signatures"]?.int == 0)
    }

    // MARK: Password fallback

    @Test("getLDASignature answered with setPassword mode 12: signed with authenticatorUsed password")
    func passwordFallback() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        try daemon.connect().adminEnroll(try TestDevice())
        let connection = try daemon.connect()
        #expect(try connection.requestLevel1().eventNames == ["getLDASignature"])
        let signed = try connection.setPassword(Passwords.initial, mode: 12)
        #expect(signed.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        let details = try #require(signed.signingDetails)
        #expect(details["authenticatorUsed"]?.stringValue == "password")
        let claims = try StepSignSignature.verify(try #require(details["payloadSignature"]?.stringValue),
                                                  trustedKeys: try connection.trustedKeys())
        #expect(claims.authenticatorUsed == "password")
    }

    @Test("a wrong password during the fallback: getPassword mode 12, 102, attemptsLeft 2")
    func passwordFallbackWrong() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let device = try TestDevice()
        try daemon.connect().adminEnroll(device)
        let connection = try daemon.connect()
        let challenge = try connection.requestLevel1()
        let wrong = try connection.setPassword(Passwords.wrong, mode: 12)
        #expect(wrong.eventNames == ["getPassword"])
        #expect(wrong.int("challengeMode", of: "getPassword") == 12)
        #expect(wrong.statusCode(of: "getPassword") == 102)
        #expect(wrong.int("attemptsLeft", of: "getPassword") == 2)
        // The password challenge replaced the device challenge.
        #expect(try connection.answer(challenge, with: device).code == 11)
        #expect(try connection.setPassword(Passwords.initial, mode: 12).signingDetails?["authenticatorUsed"]?.stringValue == "password")
    }

    @Test("setPassword in a mode other than 12 while the device challenge is open is error 11")
    func fallbackWrongMode() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let device = try TestDevice()
        try daemon.connect().adminEnroll(device)
        let connection = try daemon.connect()
        let challenge = try connection.requestLevel1()
        #expect(try connection.setPassword(Passwords.initial, mode: 0).code == 11)
        #expect(try connection.answer(challenge, with: device).statusCode(of: "onAuthenticateUserAndSignData") == 100)
    }

    @Test("a reason with a line break or control character is refused with 4 (it would forge a line of the challenge)",
          arguments: ["payment\nsystemd\n1", "payment\r", "pay\tment", "pay\u{2028}ment", "pay\u{85}ment", "pay\u{1b}[2Jment"])
    func reasonNotOneLine(reason: String) throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        try daemon.connect().adminEnroll(try TestDevice())
        let connection = try daemon.connect()
        let reply = try connection.requestLevel1(reason: reason)
        #expect(reply.code == 4)
        #expect(reply.events.isEmpty)
        // Nothing was opened.
        #expect(try connection.requestLevel1().eventNames == ["getLDASignature"])
    }

    @Test("enrolling a key that is already enrolled (same user or another) is error 4")
    func enrollTwice() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        try daemon.addUser("bob", password: Passwords.second)
        let device = try TestDevice()
        let admin = try daemon.connect()
        try admin.adminEnroll(device)
        #expect(try admin.call("admin.enrollDeviceKey", ["user": "alice", "publicKey": device.pem, "label": "again"]).code == 4)
        #expect(try admin.call("admin.enrollDeviceKey", ["user": "bob", "publicKey": device.jwkString, "label": "bob"]).code == 4)
        #expect(try daemon.userRow("bob")?["deviceKeys"]?.arrayValue?.compactMap(\.stringValue) == [])
    }

    @Test("admin.enrollDeviceKey for an unknown user and admin.revokeDeviceKey of an unknown kid are error 4")
    func adminUnknowns() throws {
        let daemon = try DaemonHarness()
        try daemon.addUser()
        let admin = try daemon.connect()
        #expect(try admin.call("admin.enrollDeviceKey", ["user": "nobody", "publicKey": try TestDevice().pem, "label": "x"]).code == 4)
        #expect(try admin.call("admin.revokeDeviceKey", ["user": "alice", "deviceKeyId": try TestDevice().kid]).code == 4)
    }

    // MARK: Helpers

    /// `reply` is a `getLDASignature` retry: mode 12, status 102, `attemptsLeft`, and a nonce
    /// different from `previous`'s.
    private func expectRetry(_ reply: ClientReply, after previous: ClientReply, attemptsLeft: Int,
                             sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(reply.code == 0, "\(reply.message)", sourceLocation: sourceLocation)
        try #require(reply.eventNames == ["getLDASignature"], "\(reply.shape)", sourceLocation: sourceLocation)
        #expect(reply.int("challengeMode", of: "getLDASignature") == 12, sourceLocation: sourceLocation)
        #expect(reply.statusCode(of: "getLDASignature") == 102, sourceLocation: sourceLocation)
        #expect(reply.int("attemptsLeft", of: "getLDASignature") == attemptsLeft, sourceLocation: sourceLocation)
        let old = try LDAChallengeText(previous, sourceLocation: sourceLocation)
        let new = try LDAChallengeText(reply, sourceLocation: sourceLocation)
        #expect(new.nonce != old.nonce, "a new challenge each time", sourceLocation: sourceLocation)
        #expect(new.lines.count == 8, sourceLocation: sourceLocation)
        #expect(Array(new.lines[2...]) == Array(old.lines[2...]), "same operation", sourceLocation: sourceLocation)
    }
}

/// Public keys that are not P-256 (generated with `openssl`).
enum BadKeys {
    static let p384 = """
        -----BEGIN PUBLIC KEY-----
        MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAESheZsHHS9by2+z7cyOpqStx2zvpFdy5z
        OURd2fiYo3QXcFFpSlM31+podu0zbN8Ei7cfdiv8b14zOah2kXcYPd8ZvBwxMQHN
        kBvruSymgjLclKQQycJqCroOcsBfyThd
        -----END PUBLIC KEY-----

        """
    static let secp256k1 = """
        -----BEGIN PUBLIC KEY-----
        MFYwEAYHKoZIzj0CAQYFK4EEAAoDQgAEKv8gocyqASqVkcPaN+b4XSc9NKkNPLqx
        xxxAC+xIX66enIp21M2Ng+8cfVRV/NsC6oa7ttmvr0syZdtw74et1w==
        -----END PUBLIC KEY-----

        """
    static let ed25519 = """
        -----BEGIN PUBLIC KEY-----
        MCowBQYDK2VwAyEAb4FBkmCOBgVnKCOTmOT9eAVfc6Q51nbJbX76Y9zx6ek=
        -----END PUBLIC KEY-----

        """
}
