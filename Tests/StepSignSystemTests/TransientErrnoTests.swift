#if canImport(Glibc)
import Glibc
#endif
import StepSignSystem
import Testing

/// Which failed calls may pass by themselves (stepsignd's start exits 74 on them, which systemd
/// restarts) and which are a setting to fix (78, which it does not): docs/decisions.md, "A
/// transient fault at start exits 74".
@Suite struct TransientErrnoTests {
    @Test("the device, a full disk or quota, memory, descriptors, a resource held for a while: may pass",
          arguments: [EIO, ENOSPC, EDQUOT, ENOMEM, ENOBUFS, EMFILE, ENFILE, EAGAIN, EBUSY, EINTR, ETIMEDOUT])
    func mayPass(code: Int32) {
        #expect(TransientErrno.contains(code))
    }

    @Test("a permission, a missing file, a read-only filesystem, a file of the wrong kind: a setting to fix",
          arguments: [EACCES, EPERM, ENOENT, EROFS, ENOTDIR, EISDIR, ELOOP, ENAMETOOLONG, EEXIST])
    func aSettingToFix(code: Int32) {
        #expect(!TransientErrno.contains(code))
    }

    @Test("a failed system call carries its errno and path up")
    func systemErrorCarriesItsErrno() {
        let error: any Error = SystemError("open", path: "/var/lib/stepsign/keys/seal.key", errno: EIO)
        let carried = error as? any ErrnoCarrying
        #expect(carried?.carriedErrno == EIO)
        #expect(carried?.carriedPath == "/var/lib/stepsign/keys/seal.key")
    }
}
