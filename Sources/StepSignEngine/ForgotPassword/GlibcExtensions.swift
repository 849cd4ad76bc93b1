#if canImport(Glibc)
import Glibc
#endif

/// glibc functions that Swift's `Glibc` module does not import (they are declared only
/// under `_GNU_SOURCE`), looked up at run time with `dlsym`. Each is nil when the C library
/// lacks it, and callers fall back.
///
/// A C shim would be tidier, but the engine's targets have no C shim of their own.
enum GlibcExtensions {
    typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>?, Int32) -> Int32
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

    /// `pipe2(2)` (glibc 2.9): a pipe with flags such as `O_CLOEXEC`, set atomically.
    static let pipe2: Pipe2? = symbol("pipe2")

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34): close every descriptor from
    /// a number on in the child.
    static let addCloseFrom: AddCloseFrom? = symbol("posix_spawn_file_actions_addclosefrom_np")

    private static func symbol<Function>(_ name: String) -> Function? {
        // RTLD_DEFAULT is (void *)0 in glibc.
        guard let address = dlsym(nil, name) else { return nil }
        return unsafeBitCast(address, to: Function.self)
    }
}
