import StepSignCrypto
import StepSignFormat
import Testing

@Suite("Ledger hash chain")
struct LedgerChainTests {
    @Test("an entry hash is SHA-256(previous hash || SHA-256(JWS)), the SPEC's formula")
    func formula() {
        let previous = [UInt8](repeating: 7, count: 32)
        let jws = "eyJhbGciOiJFUzI1NiJ9.eyJqdGkiOiIxIn0.c2ln"
        #expect(LedgerChain.entryHash(previous: previous, jws: jws) == SHA256.hash(previous + SHA256.hash(Array(jws.utf8))))
    }

    @Test("the hash from a precomputed JWS digest is the same hash")
    func precomputedDigest() {
        let jws = "a.b.c"
        #expect(LedgerChain.entryHash(previous: LedgerChain.genesisHash, jwsDigest: LedgerChain.jwsDigest(jws))
            == LedgerChain.entryHash(previous: LedgerChain.genesisHash, jws: jws))
    }
}
