import Logging
import StepSignCrypto
import StepSignFormat
import StepSignTestSupport
@testable import StepSignWitness
import Testing

/// Notes that software nobody here wrote produced, read by our parser and checked by our
/// verifier and witness.
@Suite struct PublicCheckpointTests {
    /// A checkpoint of the Go checksum database (sum.golang.org, origin "go.sum database tree")
    /// at size 35,225,469, signed by its published key: the request of litewitness's test
    /// `cmd/litewitness/testdata/sumdb.txt` (github.com/FiloSottile/litetlog).
    static let sumdbKey = "sum.golang.org+033de0ae+Ac4zctda0e5eza+HJyk9SxEdh+s3Ux18htTTAD8OuAn8"
    static let sumdbCheckpoint = """
        go.sum database tree
        35225469
        vt5T6GaLCXvyHFl9VUvvItR43XZxfLgftEcTyO3eJCQ=

        — sum.golang.org Az3grpukl5AXaVfYkLiDGORx/DN2nlcS5kZHR5uYOBV2KA2HgXpD+gu9HHONebHLAyaKbbTM75QTtPydhKCExixSfwQ=

        """

    /// The cosigned checkpoint of C2SP tlog-cosignature's text (c2sp.org/tlog-cosignature,
    /// "Below is an example of a checkpoint that contains a cosignature"); its message example
    /// gives the cosignature's time, 1679315147.
    static let specificationCosigned = """
        example.com/behind-the-sofa
        20852163
        CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=

        — example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=
        — witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==

        """

    @Test func theGoChecksumDatabasesCheckpointVerifiesWithItsKey() throws {
        let note = try SignedNote(parsing: Self.sumdbCheckpoint)
        let key = try NoteVerifierKey(Self.sumdbKey)
        #expect(try note.verifiedKeys([key]) == [key])
        let checkpoint = try LogCheckpoint(text: note.text)
        #expect(checkpoint.origin == "go.sum database tree" && checkpoint.size == 35_225_469)
        // One more leaf in the text: the signature no longer verifies.
        let changed = try SignedNote(text: note.text.replacingOccurrences(of: "35225469", with: "35225470"),
                                     signatures: note.signatures)
        #expect(throws: NoteError.self) { try changed.verifiedKeys([key]) }
    }

    @Test func ourWitnessCosignsTheGoChecksumDatabasesCheckpoint() throws {
        let directory = try TemporaryDirectory("witness-sumdb")
        defer { directory.remove() }
        let witness = try Witness(
            directory: try WitnessStateDirectory(path: directory.appending("state"), name: "witness.test/sumdb"),
            logs: [(origin: "go.sum database tree", key: try NoteVerifierKey(Self.sumdbKey))],
            now: { 1_700_000_000 }, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        let body = "old 0\n\n" + Self.sumdbCheckpoint
        let lines = try witness.addCheckpoint(body: Array(body.utf8)).get()
        let note = try SignedNote(parsing: Self.sumdbCheckpoint)
        #expect(try WitnessResponse.cosignatures(lines, of: note, witness: witness.verifierKey).count == 1)
        #expect(witness.latest(origin: "go.sum database tree")?.size == 35_225_469)
    }

    @Test func theSpecificationsCosignatureLineIsRead() throws {
        let note = try SignedNote(parsing: Self.specificationCosigned)
        #expect(note.signatures.count == 2)
        let line = note.signatures[1]
        #expect(line.name == "witness.example.com/w1")
        let cosignature = try Cosignature(bytes: line.bytes)
        #expect(cosignature.timestamp == 1_679_315_147)
        #expect(cosignature.signature.count == 64)
        // The witness's key is not published: a key of that name is not the one, and the line
        // counts for nothing (it is not an error: the verifier looks for configured keys).
        let other = try NoteVerifierKey(name: "witness.example.com/w1", ed25519: try Ed25519PrivateKey.generate().publicKey,
                                        type: .cosignatureV1)
        #expect(note.cosigners([other]).isEmpty)
    }
}
