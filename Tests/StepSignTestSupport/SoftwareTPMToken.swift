#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A real TPM 2.0 token for tests (SPEC §5.7): a software TPM (`swtpm`) on two loopback ports of
/// its own, with a tpm2-pkcs11 store initialised by `tpm2_ptool init` and a token made through
/// the PKCS#11 module itself (`pkcs11-tool --init-token`, `--init-pin`). ``remove()`` stops the
/// swtpm it started (by its pid) and removes its directory.
///
/// tpm2-pkcs11 finds the TPM and its store through `TPM2_PKCS11_TCTI` and `TPM2_PKCS11_STORE`:
/// a child gets ``environment``; a process that loads the module itself calls
/// ``useInThisProcess()`` first.
public struct SoftwareTPMToken: Sendable {
    /// Debian's `libtpm2-pkcs11-1` module.
    public static let modulePath = "/usr/lib/x86_64-linux-gnu/pkcs11/libtpm2_pkcs11.so"

    public let directory: TemporaryDirectory
    public let label: String
    public let pin: String
    public let port: Int
    public var environment: [String: String] {
        ["TPM2_PKCS11_TCTI": "swtpm:host=127.0.0.1,port=\(port)", "TPM2TOOLS_TCTI": "swtpm:host=127.0.0.1,port=\(port)",
         "TPM2_PKCS11_STORE": directory.appending("store"), "TPM2_PKCS11_LOG_LEVEL": "0"]
    }

    public init(label: String = "stepsign-tpm", pin: String = "4711-tpm-pin") throws {
        directory = try TemporaryDirectory("swtpm", mode: 0o700)
        self.label = label
        self.pin = pin
        for name in ["state", "store"] {
            try FileManager.default.createDirectory(atPath: directory.appending(name), withIntermediateDirectories: false,
                                                    attributes: [.posixPermissions: 0o700])
        }
        var started: Int?
        for _ in 0..<10 {
            let candidate = Int.random(in: 20_000..<60_000) & ~1
            let result = try Tools.run(["swtpm", "socket", "--tpm2", "--tpmstate", "dir=" + directory.appending("state"),
                                        "--server", "type=tcp,bindaddr=127.0.0.1,port=\(candidate)",
                                        "--ctrl", "type=tcp,bindaddr=127.0.0.1,port=\(candidate + 1)",
                                        "--flags", "not-need-init,startup-clear", "--daemon",
                                        "--pid", "file=" + directory.appending("swtpm.pid")], timeout: 30)
            if result.status == 0 { started = candidate; break }
        }
        guard let started else {
            directory.remove()
            throw Tools.Failure(result: Tools.Result(status: -1, stdout: "", stderr: "swtpm did not start"))
        }
        port = started
        do {
            try run(["tpm2_ptool", "init", "--path", directory.appending("store")])
            // Without a resource manager the tools leave their objects loaded; the TPM has few slots.
            try run(["tpm2_flushcontext", "-t"])
            try run(["pkcs11-tool", "--module", Self.modulePath, "--init-token", "--label", label, "--so-pin", "0000",
                     "--slot-index", "0"])
            try run(["pkcs11-tool", "--module", Self.modulePath, "--token-label", label, "--login", "--login-type", "so",
                     "--so-pin", "0000", "--init-pin", "--pin", pin])
        } catch {
            remove()
            throw error
        }
    }

    private func run(_ arguments: [String]) throws {
        let result = try Tools.run(arguments, environment: environment, timeout: 120)
        guard result.status == 0 else { throw Tools.Failure(result: result) }
    }

    public func useInThisProcess() {
        for (name, value) in environment { setenv(name, value, 1) }
    }

    /// `pkcs11-tool --list-objects` after logging in; first the transient objects and sessions an
    /// ended client left in the TPM are flushed (swtpm has no resource manager, as `/dev/tpmrm0`
    /// would be).
    public func listObjects() throws -> String {
        try run(["tpm2_flushcontext", "-t"])
        try run(["tpm2_flushcontext", "-s"])
        let result = try Tools.run(["pkcs11-tool", "--module", Self.modulePath, "--token-label", label, "--login",
                                    "--pin", pin, "--list-objects"], environment: environment, timeout: 120)
        guard result.status == 0 else { throw Tools.Failure(result: result) }
        return result.stdout
    }

    /// Stops the swtpm this token started (SIGKILL: a swtpm with a client still connected
    /// does not end on SIGTERM; its state is thrown away anyway) and removes its directory.
    public func remove() {
        if let text = try? String(contentsOfFile: directory.appending("swtpm.pid"), encoding: .utf8),
           let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0 {
            kill(pid, SIGKILL)
        }
        directory.remove()
    }
}
