import NIOCore
import NIOEmbedded
@testable import StepSignServer
import Testing

@Suite("Line framing")
struct LineFrameDecoderTests {
    private func frames(_ chunks: [String], maxLength: Int = 16) throws -> [String] {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(LineFrameDecoder(maxLength: maxLength)))
        for chunk in chunks {
            try channel.writeInbound(ByteBuffer(string: chunk))
        }
        var out: [String] = []
        while let frame = try channel.readInbound(as: Frame.self) {
            switch frame {
            case let .line(buffer): out.append(String(buffer: buffer))
            case .tooLong: out.append("<too long>")
            }
        }
        _ = try? channel.finish()
        return out
    }

    @Test("lines split at newlines, across and within chunks")
    func splitting() throws {
        #expect(try frames(["ab\ncd", "e\n\nf", "g\n"]) == ["ab", "cde", "", "fg"])
    }

    @Test("a carriage return before the newline is dropped")
    func crlf() throws {
        #expect(try frames(["ab\r\n"]) == ["ab"])
    }

    @Test("a line of exactly the limit passes; one byte more is too long and ends the stream")
    func limit() throws {
        #expect(try frames([String(repeating: "x", count: 16) + "\n"]) == [String(repeating: "x", count: 16)])
        #expect(try frames([String(repeating: "x", count: 17) + "\nok\n"]) == ["<too long>"])
    }

    @Test("an overlong line without a newline is caught before it ends")
    func overlongWithoutNewline() throws {
        #expect(try frames([String(repeating: "x", count: 10), String(repeating: "y", count: 10)]) == ["<too long>"])
    }

    @Test("a last line without a newline is not a request")
    func trailingPartial() throws {
        #expect(try frames(["one\ntwo"]) == ["one"])
    }
}
