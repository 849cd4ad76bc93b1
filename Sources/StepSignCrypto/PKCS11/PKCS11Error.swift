/// A failure of a PKCS#11 token or its module (SPEC §5.7): which call, and the `CK_RV` it
/// returned by its name, or why the module could not be used at all.
///
/// Never carries the PIN or any key material: only call names, return values, paths and labels.
public struct PKCS11Error: Error, Sendable, Equatable, CustomStringConvertible {
    /// The Cryptoki call, e.g. `"C_Login"`, or what stepsign was doing (`"dlopen"`).
    public let operation: String
    /// The `CK_RV` the call returned, or nil for a failure outside a Cryptoki call.
    public let returnValue: UInt?
    /// Why, in words (the return value's name and what it means here, or the loader's reason).
    public let reason: String

    public init(operation: String, returnValue: UInt?, reason: String) {
        self.operation = operation
        self.returnValue = returnValue
        self.reason = reason
    }

    /// The error for a call that returned `rv` (not `CKR_OK`).
    static func call(_ operation: String, _ rv: UInt) -> PKCS11Error {
        PKCS11Error(operation: operation, returnValue: rv, reason: PKCS11ReturnValue.name(rv))
    }

    /// Whether the token, its slot or the session is gone (unplugged, reset, or the module lost
    /// it): the sessions are closed and opened again at the next use.
    public var tokenStoppedAnswering: Bool {
        guard let returnValue else { return false }
        return PKCS11ReturnValue.meansTokenGone(returnValue)
    }

    /// Whether the token refused the PIN (wrong, locked or expired).
    public var isPINRefused: Bool {
        guard let returnValue else { return false }
        return PKCS11ReturnValue.meansPINRefused(returnValue)
    }

    public var description: String { "PKCS#11 \(operation) failed: \(reason)" }
}
