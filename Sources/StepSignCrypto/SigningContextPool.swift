internal import CLibcrypto
import Synchronization

/// `EVP_PKEY_CTX`s initialised for signing with one key, kept for reuse.
///
/// `EVP_PKEY_CTX_new_from_pkey` plus `EVP_PKEY_sign_init` fetch the signature algorithm from
/// the provider and set up its state on every call, a measurable part of one P-256
/// signature. A context is not thread-safe, so each signature takes one from the pool (or
/// makes one) and gives it back; the pool keeps at most `limit`. Owns its contexts and frees
/// them in `deinit`; borrows the `EVP_PKEY`, which its key keeps alive.
///
/// `@unchecked Sendable`: the `EVP_PKEY` is only read (OpenSSL 3 allows that from many
/// threads at once), and each context is used by one thread at a time, inside the mutex or
/// between `take` and `put`.
final class SigningContextPool: @unchecked Sendable {
    /// An owned `EVP_PKEY_CTX` that is not in use; only moved between threads whole.
    struct Context: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private let pkey: OpaquePointer
    private let idle = Mutex<[Context]>([])
    private let limit = 16

    init(pkey: OpaquePointer) {
        self.pkey = pkey
    }

    deinit {
        idle.withLock { contexts in
            for context in contexts { EVP_PKEY_CTX_free(context.pointer) }
            contexts.removeAll()
        }
    }

    /// A context ready for `EVP_PKEY_sign`; give it back with `put`.
    func take() throws(OpenSSLError) -> Context {
        if let context = idle.withLock({ $0.popLast() }) { return context }
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else { throw .drain("EVP_PKEY_CTX_new_from_pkey") }
        guard EVP_PKEY_sign_init(ctx) == 1 else {
            EVP_PKEY_CTX_free(ctx)
            throw .drain("EVP_PKEY_sign_init")
        }
        return Context(pointer: ctx)
    }

    /// Returns a context after a successful signature.
    func put(_ context: Context) {
        let kept = idle.withLock { contexts in
            guard contexts.count < limit else { return false }
            contexts.append(context)
            return true
        }
        if !kept { EVP_PKEY_CTX_free(context.pointer) }
    }

    /// Frees a context after a failed signature rather than reuse it.
    func discard(_ context: Context) {
        EVP_PKEY_CTX_free(context.pointer)
    }
}
