internal import CPKCS11

/// A `CK_ATTRIBUTE` array with the values it points to, for one Cryptoki call.
///
/// Owns the memory of every value and of the array; `deinit` frees them, so the pointers stay
/// valid for as long as the template is in use and are never shared.
final class PKCS11Template {
    private(set) var attributes: UnsafeMutablePointer<CK_ATTRIBUTE>
    let count: Int
    private var values: [UnsafeMutableRawPointer] = []

    init(_ items: [(type: UInt, value: [UInt8])]) {
        count = items.count
        attributes = .allocate(capacity: max(1, items.count))
        for (index, item) in items.enumerated() {
            let memory = UnsafeMutableRawPointer.allocate(byteCount: max(1, item.value.count), alignment: 8)
            item.value.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress { memory.copyMemory(from: base, byteCount: bytes.count) }
            }
            values.append(memory)
            (attributes + index).initialize(to: CK_ATTRIBUTE(type: CK_ATTRIBUTE_TYPE(item.type), pValue: memory,
                                                              ulValueLen: UInt(item.value.count)))
        }
    }

    deinit {
        for value in values { value.deallocate() }
        attributes.deinitialize(count: count)
        attributes.deallocate()
    }

    /// The value of the `index`th attribute as the token filled it in.
    func value(at index: Int) -> [UInt8] {
        let attribute = attributes[index]
        guard let pointer = attribute.pValue, attribute.ulValueLen != UInt.max else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: Int(attribute.ulValueLen)))
    }

    static func bool(_ value: Bool) -> [UInt8] { [value ? 1 : 0] }

    /// A `CK_ULONG` value (class, key type) in the host's byte order, as Cryptoki wants it.
    static func ulong(_ value: UInt) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
}
