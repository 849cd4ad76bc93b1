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

    @Test("decodes an admin.exportLedger line")
    func decodesLine() throws {
        let line = #"{"seq":3,"signatureID":"x","payloadSignature":"a.b.c","prevHash":"\#(String(repeating: "ab", count: 32))","entryHash":"\#(String(repeating: "cd", count: 32))"}"#
        let entry = try JSONDecoder().decode(LedgerExportEntry.self, from: Data(line.utf8))
        #expect(entry.seq == 3)
        #expect(try entry.ledgerLink().prevHash == [UInt8](repeating: 0xab, count: 32))
    }

    @Test("hashes that are not 32 bytes of hex are refused")
    func badHashes() {
        let entry = LedgerExportEntry(seq: 2, signatureID: "x", payloadSignature: "a.b.c", prevHash: "00", entryHash: String(repeating: "0", count: 64))
        #expect(throws: LedgerExportError.badHash(seq: 2, field: "prevHash")) { try entry.ledgerLink() }
        let other = LedgerExportEntry(seq: 2, signatureID: "x", payloadSignature: "a.b.c", prevHash: String(repeating: "0", count: 64), entryHash: String(repeating: "zz", count: 32))
        #expect(throws: LedgerExportError.badHash(seq: 2, field: "entryHash")) { try other.ledgerLink() }
    }
}
