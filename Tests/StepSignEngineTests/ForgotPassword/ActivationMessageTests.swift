import Foundation
@testable import StepSignEngine
import Testing

@Suite("Activation messages")
struct ActivationMessageTests {
    static let message = ActivationMessage(
        user: "alice", verificationKey: "maple-otter", activationCode: "7K9M2P3Q",
        expiresAt: Date(timeIntervalSince1970: 1_748_781_296.9)
    )

    @Test("the JSON line is exactly the four members in order, expiresAt RFC 3339 UTC in whole seconds")
    func jsonLine() {
        let text = String(decoding: Self.message.jsonLine, as: UTF8.self)
        #expect(text == #"{"user":"alice","verificationKey":"maple-otter","activationCode":"7K9M2P3Q","expiresAt":"2025-06-01T12:34:56Z"}"# + "\n")
    }

    @Test("the JSON is one line whatever the user ID holds")
    func escaping() throws {
        var message = Self.message
        message.user = "a\"b\\c\u{2028}é"
        let line = message.jsonLine
        #expect(line.filter { $0 == 0x0A }.count == 1)
        let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: String]
        #expect(object?["user"] == message.user)
    }

    @Test("the description and the mirror leave the code out")
    func redacted() {
        #expect(!Self.message.description.contains("7K9M2P3Q"))
        #expect(!String(reflecting: Self.message).contains("7K9M2P3Q"))
        var dumped = ""
        dump(Self.message, to: &dumped)
        #expect(!dumped.contains("7K9M2P3Q"))
        #expect("\(Self.message)".contains("maple-otter"))
    }
}
