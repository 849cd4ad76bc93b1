import Foundation
import StepSignCrypto
import StepSignFormat
import Testing

@Suite("LedgerExportEntry")
struct LedgerExportEntryTests {
    @Test("converts to a LedgerLink and back")
    func roundTrip() throws {
        let hash = LedgerChain.entryHash(previous: LedgerChain.genesisHash, jws: "a.b.c")
        let link = LedgerLink(seq: 1, signatureID: "id", payloadSignature: "a.b.c", prevHash: LedgerChain.genesisHash, entryHash: hash)
        let entry = LedgerExportEntry(link)
        #expect(entry.prevHash == String(repeating: "0", count: 64))
        #expect(entry.entryHash == Hex.encode(hash))
        #expect(try entry.ledgerLink() == link)
    }

    static let hashes = #""prevHash":"\#(String(repeating: "ab", count: 32))","entryHash":"\#(String(repeating: "cd", count: 32))""#

    @Test("reads an admin.exportLedger line, with and without user and peer")
    func readsLine() throws {
        let line = #"{"seq":3,"signatureID":"x","payloadSignature":"a.b.c",\#(Self.hashes)}"#
        let entry = try #require(LedgerExportEntry(jsonLine: line.utf8))
        #expect(entry.seq == 3 && entry.user == nil && entry.peer == nil)
        #expect(try entry.ledgerLink().prevHash == [UInt8](repeating: 0xab, count: 32))
        let full = #"{"seq":4,"signatureID":"y","payloadSignature":"a.b.c",\#(Self.hashes),"user":"alice","peer":{"uid":1000,"pid":42,"comm":"app"},"extra":1}"#
        let read = try #require(LedgerExportEntry(jsonLine: full.utf8))
        #expect(read.user == "alice" && read.peer == SignaturePeer(uid: 1000, pid: 42, comm: "app"))
        // What the daemon's Codable form writes reads back the same.
        #expect(LedgerExportEntry(jsonLine: try JSONEncoder().encode(read)) == read)
    }

    @Test("a line with a member named twice, missing or of the wrong type is not an entry",
          arguments: [
              #"{"seq":3,"seq":4,"signatureID":"x","payloadSignature":"a.b.c",\#(hashes)}"#,
              #"{"seq":3,"signatureID":"x","payloadSignature":"a.b.c",\#(hashes),"user":"bob","user":"alice"}"#,
              #"{"signatureID":"x","payloadSignature":"a.b.c",\#(hashes)}"#,
              #"{"seq":"3","signatureID":"x","payloadSignature":"a.b.c",\#(hashes)}"#,
              #"{"seq":3,"signatureID":"x","payloadSignature":"a.b.c",\#(hashes),"peer":{"uid":-1,"pid":1,"comm":"a"}}"#,
              #"[3]"#,
          ])
    func refusesLine(_ line: String) {
        #expect(LedgerExportEntry(jsonLine: line.utf8) == nil)
    }

    @Test("hashes that are not 32 bytes of hex are refused")
    func badHashes() {
        let entry = LedgerExportEntry(seq: 2, signatureID: "x", payloadSignature: "a.b.c", prevHash: "00", entryHash: String(repeating: "0", count: 64))
        #expect(throws: LedgerExportError.badHash(seq: 2, field: "prevHash")) { try entry.ledgerLink() }
        let other = LedgerExportEntry(seq: 2, signatureID: "x", payloadSignature: "a.b.c", prevHash: String(repeating: "0", count: 64), entryHash: String(repeating: "zz", count: 32))
        #expect(throws: LedgerExportError.badHash(seq: 2, field: "entryHash")) { try other.ledgerLink() }
    }
}
