internal import CPKCS11
#if canImport(Glibc)
import Glibc
#endif

/// A PKCS#11 module (`[signing.pkcs11] module`, SPEC §5.7), loaded with `dlopen` and
/// initialised with `C_Initialize` once, for as long as this object lives.
///
/// Owns the `dlopen` handle and the module's initialisation: `deinit` calls `C_Finalize` and
/// `dlclose`. Sessions and objects belong to ``PKCS11Token``, which keeps its module alive.
/// `@unchecked Sendable`: the function list is read-only after `init`, and the module is
/// initialised with `CKF_OS_LOCKING_OK`, so its functions may be called from any thread.
final class PKCS11Module: @unchecked Sendable {
    let path: String
    private let handle: UnsafeMutableRawPointer
    /// The module's function list; owned by the module, valid until `dlclose`.
    let functions: UnsafeMutablePointer<CK_FUNCTION_LIST>

    /// Loads and initialises the module at `path`. Throws when the file cannot be loaded,
    /// exports no `C_GetFunctionList`, or `C_Initialize` fails.
    init(path: String) throws(PKCS11Error) {
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "cannot be loaded"
            throw PKCS11Error(operation: "dlopen", returnValue: nil, reason: reason)
        }
        guard let symbol = dlsym(handle, "C_GetFunctionList") else {
            dlclose(handle)
            throw PKCS11Error(operation: "dlsym", returnValue: nil, reason: "\(path) is not a PKCS#11 module (no C_GetFunctionList)")
        }
        let getFunctionList = unsafeBitCast(symbol, to: CK_C_GetFunctionList.self)
        var list: UnsafeMutablePointer<CK_FUNCTION_LIST>?
        let rv = getFunctionList(&list)
        guard rv == CKR_OK, let list, list.pointee.C_Initialize != nil else {
            dlclose(handle)
            throw rv == CKR_OK ? PKCS11Error(operation: "C_GetFunctionList", returnValue: nil, reason: "no function list")
                : PKCS11Error.call("C_GetFunctionList", rv)
        }
        let initialized = Self.initialize(list)
        guard initialized == CKR_OK else {
            dlclose(handle)
            throw PKCS11Error.call("C_Initialize", initialized)
        }
        self.path = path
        self.handle = handle
        self.functions = list
    }

    /// `C_Initialize` with OS locking, so that any thread may call the module.
    private static func initialize(_ list: UnsafeMutablePointer<CK_FUNCTION_LIST>) -> CK_RV {
        var arguments = CK_C_INITIALIZE_ARGS()
        arguments.flags = CK_FLAGS(CKF_OS_LOCKING_OK)
        return withUnsafeMutablePointer(to: &arguments) { list.pointee.C_Initialize!(UnsafeMutableRawPointer($0)) }
    }

    /// `C_Finalize` then `C_Initialize`: what a module that lost its token needs before it sees
    /// the token again (SoftHSM2 and others scan their slots only when initialised). Every
    /// session and object handle of the module is gone afterwards; the caller (``PKCS11Token``)
    /// holds none by then.
    func reinitialize() throws(PKCS11Error) {
        _ = functions.pointee.C_Finalize?(nil)
        try check(Self.initialize(functions), "C_Initialize")
    }

    deinit {
        _ = functions.pointee.C_Finalize?(nil)
        dlclose(handle)
    }

    /// Throws the typed error for `operation` unless `rv` is `CKR_OK`.
    @inline(__always)
    func check(_ rv: CK_RV, _ operation: String) throws(PKCS11Error) {
        guard rv == CKR_OK else { throw PKCS11Error.call(operation, rv) }
    }

    /// A function the module left out of its list (`CKR_FUNCTION_NOT_SUPPORTED`).
    func missing(_ operation: String) -> PKCS11Error {
        PKCS11Error.call(operation, UInt(CKR_FUNCTION_NOT_SUPPORTED))
    }
}
