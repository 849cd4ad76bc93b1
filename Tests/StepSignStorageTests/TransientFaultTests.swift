#if canImport(Glibc)
import Glibc
#endif
import StepSignStorage
import Testing

/// A store's failure at start as stepsignd's start reads it: a fault that may pass (exit 74,
/// restarted) names the file and the errno's text; anything else is none (docs/decisions.md,
/// "A transient fault at start exits 74").
@Suite struct TransientFaultTests {
    @Test("the database file or the state directory failing with EIO, ENOSPC or EMFILE: a fault that may pass",
          arguments: [EIO, ENOSPC, EMFILE])
    func aDiskFaultMayPass(code: Int32) throws {
        let file = try #require(TransientFault(StorageError.stateFile(path: "/var/lib/stepsign/stepsign.sqlite", errno: code)))
        #expect(file.path == "/var/lib/stepsign/stepsign.sqlite")
        #expect(file.reason == String(cString: strerror(code)))
        let directory = try #require(TransientFault(StorageError.stateDirectory(path: "/var/lib/stepsign", errno: code)))
        #expect("\(directory)" == "/var/lib/stepsign: \(String(cString: strerror(code)))")
    }

    @Test("a permission or a missing directory is a setting to fix, not a fault that may pass", arguments: [EACCES, ENOENT, EROFS])
    func aSettingIsNone(code: Int32) {
        #expect(TransientFault(StorageError.stateFile(path: "/var/lib/stepsign/stepsign.sqlite", errno: code)) == nil)
    }

    @Test("an error about the data (another seal key, a damaged row) carries no errno and is none")
    func aContentErrorIsNone() {
        #expect(TransientFault(StorageError.sealKeyMismatch) == nil)
        #expect(TransientFault(StorageError.malformedRow(table: "store_secrets", detail: "short")) == nil)
    }
}
