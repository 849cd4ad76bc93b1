import StepSignStorage

/// The seal key of the storage tests' stores (SPEC §5.4): one fixed key, as a daemon keeps one
/// in `keys/seal.key` or an operator gives every host the same `storage.seal_key_file`.
enum TestSeal {
    static let seal: CredentialSeal = try! CredentialSeal(key: [UInt8](repeating: 0x5e, count: CredentialSeal.keyLength))
}
