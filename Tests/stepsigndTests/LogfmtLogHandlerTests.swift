#if canImport(Glibc)
import Glibc
#endif
import Logging
import Testing
@testable import StepSignDaemonProgram

@Suite("logfmt lines")
struct LogfmtLogHandlerTests {
    /// 2026-11-21T12:43:04.007Z
    let time = timespec(tv_sec: 1_795_264_984, tv_nsec: 7_500_000)

    func line(_ message: String, _ metadata: Logger.Metadata = [:], level: Logger.Level = .notice) -> String {
        String(decoding: LogfmtLogHandler.line(level: level, message: message, metadata: metadata, at: time), as: UTF8.self)
    }

    @Test func aRecordIsOneLineWithTimeLevelMessageAndSortedKeys() {
        #expect(line("signed", ["user": "alice", "seq": "42", "kid": "k1"])
            == "ts=2026-11-21T12:43:04.007Z level=notice msg=signed kid=k1 seq=42 user=alice\n")
    }

    @Test func valuesWithSpacesQuotesOrEqualsAreQuotedAndEscaped() {
        #expect(line("request failed", ["error": #"bad "x"=1 \ end"#])
            == #"ts=2026-11-21T12:43:04.007Z level=notice msg="request failed" error="bad \"x\"=1 \\ end""# + "\n")
    }

    @Test func controlCharactersCannotBreakTheLine() {
        let text = line("a\nb", ["comm": "evil\r\nlevel=error\u{1B}[2J\t\u{7F}"])
        #expect(text.filter { $0 == "\n" }.count == 1)
        #expect(text.hasSuffix(#"msg="a\nb" comm="evil\r\nlevel=error\u001b[2J\t\u007f""# + "\n"))
    }

    @Test func anEmptyValueIsWrittenAsEmptyQuotes() {
        #expect(line("", ["user": ""]) == #"ts=2026-11-21T12:43:04.007Z level=notice msg="" user="""# + "\n")
    }

    @Test func nonASCIITextPassesThroughUnquoted() {
        #expect(line("signé", ["user": "zoë"]).hasSuffix("msg=signé user=zoë\n"))
    }

    struct Refusal: Error, CustomStringConvertible {
        var description: String { "refused" }
    }

    func event(metadata: Logger.Metadata?, error: (any Error)? = nil) -> LogEvent {
        LogEvent(level: .error, message: "failed", error: error, metadata: metadata, source: nil,
                 file: #fileID, function: #function, line: #line)
    }

    @Test func theEventsMetadataWinsOverTheHandlers() {
        let merged = LogfmtLogHandler.metadata(of: event(metadata: ["user": "bob"]), over: ["user": "alice", "pid": "7"])
        #expect(merged == ["user": "bob", "pid": "7"])
    }

    @Test func anEventsErrorIsLoggedAsErrorUnlessTheMetadataHasOne() {
        #expect(LogfmtLogHandler.metadata(of: event(metadata: nil, error: Refusal()), over: [:]) == ["error": "refused"])
        #expect(LogfmtLogHandler.metadata(of: event(metadata: ["error": "mine"], error: Refusal()), over: [:]) == ["error": "mine"])
    }
}
