internal import CLibcrypto
internal import COpenSSLShims

/// Owns one memory `BIO`: the source or sink of PEM text for libcrypto's PEM functions.
final class MemoryBIO {
    let pointer: OpaquePointer

    /// An empty memory BIO to write into.
    init() throws(OpenSSLError) {
        guard let method = BIO_s_mem(), let bio = BIO_new(method) else { throw OpenSSLError.drain("BIO_new") }
        pointer = bio
    }

    /// A memory BIO holding a copy of `text`'s UTF-8 bytes, to read from.
    convenience init(text: String) throws(OpenSSLError) {
        try self.init()
        var text = text
        let written = text.withUTF8 { utf8 -> Int32 in
            guard utf8.count > 0 else { return 0 }
            return BIO_write(pointer, utf8.baseAddress, Int32(utf8.count))
        }
        let expected = text.utf8.count
        guard expected == 0 || Int(written) == expected else { throw OpenSSLError.drain("BIO_write") }
    }

    deinit { BIO_free(pointer) }

    /// Everything written so far, as text (PEM is ASCII).
    func text() -> String {
        var data: UnsafeMutablePointer<CChar>?
        let length = stepsign_BIO_get_mem_data(pointer, &data)
        guard length > 0, let data else { return "" }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }
}
