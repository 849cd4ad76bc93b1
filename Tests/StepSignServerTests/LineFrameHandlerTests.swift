import NIOCore
import NIOEmbedded
@testable import StepSignServer
import Testing

@Suite("Line framing")
struct LineFrameHandlerTests {
    private func frames(_ chunks: [String], maxLength: Int = 16) throws -> [String] {
        let channel = EmbeddedChannel(handler: LineFrameHandler(maxLength: maxLength))
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

    @Test("a line split over many reads, byte by byte, is one line; so are lines of which a read holds several")
    func splitOverManyReads() throws {
        let text = "first line\r\nsecond\n\nfourth\n"
        #expect(try frames(text.map { String($0) }, maxLength: 64) == ["first line", "second", "", "fourth"])
        #expect(try frames([text + text], maxLength: 64) == ["first line", "second", "", "fourth", "first line", "second", "", "fourth"])
    }

    @Test("the limit counts the whole line, across reads: 16 bytes in two reads pass, 17 do not")
    func limitAcrossReads() throws {
        #expect(try frames(["12345678", "90abcdef\n"]) == ["1234567890abcdef"])
        #expect(try frames(["12345678", "90abcdefg\nok\n"]) == ["<too long>"])
        #expect(try frames(["ok\n12345678", "90abcdefg", "more\n"]) == ["ok", "<too long>"])
    }
}
