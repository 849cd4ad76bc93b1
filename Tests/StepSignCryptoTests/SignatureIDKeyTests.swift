import StepSignCrypto
import Testing

@Suite("A signature ID as a set's key")
struct SignatureIDKeyTests {
    @Test("a lowercase canonical UUID is kept as its bits, anything else as its text")
    func forms() {
        #expect(SignatureIDKey("01234567-89ab-cdef-fedc-ba9876543210")
            == .uuid(UUIDBits(canonical: "01234567-89ab-cdef-fedc-ba9876543210")!))
        #expect(SignatureIDKey("01234567-89AB-cdef-fedc-ba9876543210") == .text("01234567-89AB-cdef-fedc-ba9876543210"))
        #expect(SignatureIDKey("sig-1") == .text("sig-1"))
    }

    @Test("two IDs are the same key exactly when their texts are the same", arguments: [
        ("01234567-89ab-cdef-fedc-ba9876543210", "01234567-89ab-cdef-fedc-ba9876543210", true),
        ("01234567-89ab-cdef-fedc-ba9876543210", "01234567-89ab-cdef-fedc-ba9876543211", false),
        ("01234567-89ab-cdef-fedc-ba9876543210", "01234567-89AB-CDEF-FEDC-BA9876543210", false),
        ("sig-1", "sig-1", true),
        ("sig-1", "sig-2", false),
    ])
    func equality(_ a: String, _ b: String, _ same: Bool) {
        #expect((SignatureIDKey(a) == SignatureIDKey(b)) == same)
        #expect(Set([SignatureIDKey(a), SignatureIDKey(b)]).count == (same ? 1 : 2))
    }
}
