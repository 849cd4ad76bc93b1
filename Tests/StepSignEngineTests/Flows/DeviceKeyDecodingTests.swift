import Foundation
import StepSignProtocol
@testable import StepSignEngine
import StepSignCrypto
import StepSignStorage
import StepSignEngineTestSupport
import Testing

/// Device keys are decoded only when a signature by one is checked, one key per answer; a key
/// the store holds in a form that cannot be read is offered by its ID but answers nothing.
@Suite("Device keys decoded when used")
final class DeviceKeyDecodingTests: Sendable {
    let directory: String
    let engine: Engine
    let log = CapturedLog()

    init() async throws {
        (engine, directory) = try await makeTestEngine("engine-device-keys", logger: log.logger())
        try await addTestUser(engine)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    static let peer = Peer(uid: 1000, gid: 1000, pid: 42, comm: "tester", groups: [])
    static let open = #"{"id":1,"op":"authenticateUserAndSignData","user":"alice","payload":"p","reason":"r","authLevel":1,"authenticatorType":0}"#

    @Test("an unreadable stored key is listed, refused as a wrong answer and logged; the good key still signs")
    func unreadableKey() async throws {
        let device = try P256PrivateKey.generate()
        var admin = Session(peer: testAdminPeer, isAdmin: true)
        let pem = device.publicKey.spkiPEM.replacingOccurrences(of: "\n", with: "\\n")
        let enrolled = await engine.handle(
            line: Array(#"{"id":2,"op":"admin.enrollDeviceKey","user":"alice","publicKey":"\#(pem)"}"#.utf8), session: &admin)
        #expect(enrolled.error == nil, "\(enrolled.line)")
        try await engine.credentials.store.addDeviceKey(DeviceKeyRecord(kid: "broken", user: "alice", publicKeyJWK: "{not a jwk",
                                                            label: "", createdAt: Date()))

        var session = Session(peer: Self.peer, isAdmin: false)
        let challenge = await engine.handle(line: Array(Self.open.utf8), session: &session)
        guard case let .getLDASignature(_, _, _, deviceKeys, _, _, _)? = challenge.events.first else {
            Issue.record("no getLDASignature: \(challenge.line)"); return
        }
        #expect(Set(deviceKeys) == [device.publicKey.thumbprint, "broken"])

        let signature = Base64URL.encode([UInt8](repeating: 1, count: 64))
        let refused = await engine.handle(
            line: Array(#"{"id":3,"op":"setLDASignature","deviceKeyId":"broken","signature":"\#(signature)"}"#.utf8), session: &session)
        guard case let .getLDASignature(_, _, _, _, attemptsLeft, status, _)? = refused.events.first else {
            Issue.record("no retry: \(refused.line)"); return
        }
        #expect(status.code == .authenticationFailed)
        #expect(attemptsLeft == 2)
        #expect(log.lines("unreadable device key in the store").count == 1)

        guard case let .signing(open)? = session.pending, let device2 = (open.authenticator as? DeviceKeyStepUp)?.challenge else {
            Issue.record("no device challenge open"); return
        }
        let right = Base64URL.encode(try device.signatureES256(for: device2.bytes))
        let signed = await engine.handle(
            line: Array(#"{"id":4,"op":"setLDASignature","deviceKeyId":"\#(device.publicKey.thumbprint)","signature":"\#(right)"}"#.utf8),
            session: &session)
        guard case let .onAuthenticateUserAndSignData(details, status)? = signed.events.first else {
            Issue.record("not signed: \(signed.line)"); return
        }
        #expect(status == .success)
        #expect(!details.dataSignatureID.isEmpty)
    }
}
