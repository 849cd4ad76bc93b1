#if canImport(Glibc)
import Glibc
#endif

/// Calls `call` again for as long as it fails with `EINTR` (a signal arrived before it could
/// do anything), as SwiftNIO's system-call wrapper does, and returns its result: negative with
/// `errno` set as the call left it on any other failure.
///
/// One place for the rule, instead of a `continue` in every read, write, poll and lock loop.
@inlinable
public func retryingOnEINTR<Result: SignedInteger>(_ call: () -> Result) -> Result {
    while true {
        let result = call()
        if result < 0, errno == EINTR { continue }
        return result
    }
}
