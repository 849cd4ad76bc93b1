/// A request/reply protocol the pipelined load speaks.
protocol WireProtocol {
    /// Appends request number `serial` to `out`.
    func request(_ serial: Int, into out: inout [UInt8])
    /// If `input[start...]` begins with a whole reply, its length and whether it succeeded.
    func reply(_ input: UnsafeRawBufferPointer) -> (length: Int, ok: Bool)?
}

/// `bytes` printable bytes (no JSON escaping needed), distinct per request.
func payload(_ serial: Int, bytes: Int) -> [UInt8] {
    var text = Array("bench payload #\(serial) ".utf8)
    while text.count < bytes { text.append(UInt8(ascii: "a") + UInt8(text.count % 26)) }
    return Array(text.prefix(bytes))
}
