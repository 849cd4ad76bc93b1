import StepSignCrypto
import StepSignFormat
@testable import StepSignWitness
import Testing

/// The body of `add-checkpoint` (C2SP tlog-witness v1), read strictly: anything else is 400
/// (or 413 when larger than any valid request), never a guess.
@Suite struct AddCheckpointRequestTests {
    @Test func theBodyReadsBackAsWritten() throws {
        let log = try TestLog(size: 20)
        let request = try log.request(old: 7, new: 20)
        #expect(request.proof.count > 1)
        let body = request.body
        #expect(body.hasPrefix("old 7\n" + Base64.encode(request.proof[0]) + "\n"))
        #expect(body.contains("\n\n" + log.origin + "\n20\n"))
        #expect(try AddCheckpointRequest(body: Array(body.utf8)) == request)
    }

    @Test func theSpecificationsExampleIsRead() throws {
        // The request body of C2SP tlog-witness's "add-checkpoint" section.
        let body = """
            old 20852014
            PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=
            jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=
            5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=
            /6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=

            example.com/behind-the-sofa
            20852163
            CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=

            — example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=
            — example.com/behind-the-sofa opLqBQsREYCgu6xQkYQwJr9fo45a62DN9EdmHXnZdXNqlcVGlCum2Wks+49/V6267UEjw6QUXTS5Rovnzv++qbSzm9Q=

            """
        let request = try AddCheckpointRequest(body: Array(body.utf8))
        #expect(request.oldSize == 20_852_014)
        #expect(request.proof.count == 4)
        #expect(request.checkpoint.signatures.count == 2)
        #expect(try LogCheckpoint(text: request.checkpoint.text).size == 20_852_163)
    }

    @Test(arguments: [
        ("no old line", "7\n\n"),
        ("a leading zero", "old 07\n\n"),
        ("a sign", "old +7\n\n"),
        ("a negative size", "old -7\n\n"),
        ("a size past Int64", "old 99999999999999999999\n\n"),
        ("a space too many", "old  7\n\n"),
        ("a short hash", "old 7\nAAAA\n\n"),
        ("base64 with a space", "old 7\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpk aw=\n\n"),
        ("no blank line", "old 7\n"),
    ])
    func aMalformedHeadIs400(_ why: String, _ head: String) throws {
        let note = try TestLog(size: 9).checkpoint(9).serialized
        #expect(throws: WitnessRefusal.self, "\(why)") { try AddCheckpointRequest(body: Array((head + note).utf8)) }
        do { _ = try AddCheckpointRequest(body: Array((head + note).utf8)) } catch { #expect(error.status == 400) }
    }

    @Test func sixtyFourProofLinesAre400AndSixtyThreeAreRead() throws {
        let note = try TestLog(size: 9).checkpoint(9).serialized
        let line = Base64.encode([UInt8](repeating: 1, count: 32)) + "\n"
        #expect(try AddCheckpointRequest(body: Array(("old 7\n" + String(repeating: line, count: 63) + "\n" + note).utf8)).proof.count == 63)
        do {
            _ = try AddCheckpointRequest(body: Array(("old 7\n" + String(repeating: line, count: 64) + "\n" + note).utf8))
            Issue.record("64 proof lines were read")
        } catch { #expect(error.status == 400) }
    }

    @Test func aBodyLargerThanAnyRequestIs413() throws {
        let body = [UInt8](repeating: 0x41, count: AddCheckpointRequest.maxBodySize + 1)
        do {
            _ = try AddCheckpointRequest(body: body)
            Issue.record("an oversized body was read")
        } catch { #expect(error == .tooLarge(limit: AddCheckpointRequest.maxBodySize)) }
    }

    @Test func aCheckpointThatIsNotASignedNoteIs400() throws {
        for tail in ["", "test.example/log\n9\n", "test.example/log\n9\nAAAA\n\n— x AAAA\n", "\u{0}\n\n— a b\n"] {
            do {
                _ = try AddCheckpointRequest(body: Array(("old 0\n\n" + tail).utf8))
                Issue.record("\(tail) was read")
            } catch { #expect(error.status == 400) }
        }
    }
}
