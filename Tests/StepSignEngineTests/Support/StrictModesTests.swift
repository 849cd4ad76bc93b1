#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import StepSignEngine
import StepSignConfig
import Testing
import StepSignTestSupport

/// ``StrictModes`` on real files in a temporary directory (the daemon-level tests with other
/// uids are in StepSignIntegrationTests/StrictModesTests.swift).
@Suite("Strict modes: the rules")
struct StrictModesRuleTests {
    private func withDirectory(_ body: (String) throws -> Void) throws {
        let directory = try TemporaryDirectory("strict-modes", mode: 0o755)
        defer { directory.remove() }
        try body(directory.path)
    }

    private func file(_ path: String, mode: Int) throws {
        #expect(FileManager.default.createFile(atPath: path, contents: Data("x\n".utf8), attributes: [.posixPermissions: mode]))
    }

    @Test("parent(of:) handles bare names, the root and trailing slashes")
    func parents() {
        #expect(StrictModes.parent(of: "/etc/stepsign/x.toml") == "/etc/stepsign")
        #expect(StrictModes.parent(of: "/x") == "/")
        #expect(StrictModes.parent(of: "/") == "/")
        #expect(StrictModes.parent(of: "x.toml") == ".")
        #expect(StrictModes.parent(of: "a/b/") == "a")
    }

    @Test("a trusted input: 0644 and 0640 pass; 0664, 0646 fail naming the mode")
    func trustedInputModes() throws {
        try withDirectory { directory in
            let path = directory + "/c.toml"
            for mode in [0o644, 0o640, 0o600, 0o444] {
                try file(path, mode: mode)
                try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
                try StrictModes().checkConfigurationFile(path)
            }
            for mode in [0o664, 0o646, 0o620] {
                try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
                #expect(throws: StrictModesError(role: "configuration file", file: path, path: path,
                                                 problem: .writableByGroupOrOthers(mode: UInt32(0o100000 | mode)))) {
                    try StrictModes().checkConfigurationFile(path)
                }
            }
        }
    }

    @Test("a missing trusted input or a directory in its place is refused")
    func missingOrDirectory() throws {
        try withDirectory { directory in
            #expect(throws: StrictModesError.self) { try StrictModes().checkConfigurationFile(directory + "/none.toml") }
            #expect(throws: StrictModesError(role: "configuration file", file: directory, path: directory,
                                             problem: .wrongType(expected: "a regular file"))) {
                try StrictModes().checkConfigurationFile(directory)
            }
        }
    }

    @Test("a missing state directory passes (the daemon creates it 0700), but not under a directory others may write")
    func missingStateDirectory() throws {
        try withDirectory { directory in
            try StrictModes().checkStateDirectory(directory + "/state")
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory)
            #expect(throws: StrictModesError(role: "state directory", file: directory + "/state", path: directory,
                                             problem: .directoryWritableByGroupOrOthers(mode: UInt32(0o040777)))) {
                try StrictModes().checkStateDirectory(directory + "/state")
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o1777], ofItemAtPath: directory)
            try StrictModes().checkStateDirectory(directory + "/state")
        }
    }

    @Test("the socket's directory: 0755 and 1777 pass, 0777 and 0775 fail naming it, another uid's fails (as root); the socket itself is not checked")
    func socketDirectory() throws {
        try withDirectory { directory in
            let socket = directory + "/s.sock"
            try file(socket, mode: 0o666)  // a stale file there is the daemon's to replace
            try StrictModes().checkSocketDirectory(of: socket)
            for mode in [0o777, 0o775] {
                try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: directory)
                #expect(throws: StrictModesError(role: "server.socket", file: socket, path: directory,
                                                 problem: .directoryWritableByGroupOrOthers(mode: UInt32(0o040000 | mode)))) {
                    try StrictModes().checkSocketDirectory(of: socket)
                }
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o1777], ofItemAtPath: directory)
            try StrictModes().checkSocketDirectory(of: socket)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
            guard getuid() == 0 else { return }  // chown to another uid needs root
            try FileManager.default.setAttributes([.ownerAccountID: 65534], ofItemAtPath: directory)
            #expect(throws: StrictModesError(role: "server.socket", file: socket, path: directory,
                                             problem: .owner(uid: 65534, allowed: [0]))) {
                try StrictModes().checkSocketDirectory(of: socket)
            }
        }
    }

    @Test("for a daemon of another uid, root's state is not its own, but root's configuration is trusted")
    func otherDaemonUser() throws {
        try withDirectory { directory in
            let state = directory + "/state"
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false,
                                                    attributes: [.posixPermissions: 0o700])
            try file(directory + "/c.toml", mode: 0o644)
            let asNobody = StrictModes(uid: 65534)
            try asNobody.checkConfigurationFile(directory + "/c.toml")
            #expect(throws: StrictModesError(role: "state directory", file: state, path: state,
                                             problem: .owner(uid: getuid(), allowed: [65534]))) {
                try asNobody.checkStateDirectory(state)
            }
            try StrictModes(uid: getuid()).checkStateDirectory(state)
        }
    }

    @Test("the configuration's referenced files are checked only when they are in use")
    func referencedFiles() throws {
        try withDirectory { directory in
            var config = StepSignConfiguration()
            config.idv.trustedKeys = directory + "/idv.pem"
            config.password.commonPasswordsFile = ""
            config.forgotPassword.notifier = [directory + "/notify"]
            config.forgotPassword.enabled = false
            try file(directory + "/idv.pem", mode: 0o666)
            try file(directory + "/notify", mode: 0o777)
            // IDV off (no issuer), forgot-password off: neither is read, neither is checked.
            try StrictModes().checkReferencedFiles(of: config)
            config.idv.issuer = "https://idv.test"
            #expect(throws: StrictModesError.self) { try StrictModes().checkReferencedFiles(of: config) }
            config.idv.issuer = ""
            config.forgotPassword.enabled = true
            #expect(throws: StrictModesError(role: "forgot_password.notifier program", file: directory + "/notify",
                                             path: directory + "/notify", problem: .writableByGroupOrOthers(mode: UInt32(0o100777)))) {
                try StrictModes().checkReferencedFiles(of: config)
            }
        }
    }

    @Test("the message names the file, the directory at fault, owner and mode")
    func descriptions() {
        let owner = StrictModesError(role: "idv.trusted_keys", file: "/etc/stepsign/idv.pem", path: "/etc/stepsign/idv.pem",
                                     problem: .owner(uid: 1000, allowed: [0, 998]))
        #expect(owner.description == "strict modes: idv.trusted_keys /etc/stepsign/idv.pem is owned by uid 1000; it must belong to root or uid 998")
        let directory = StrictModesError(role: "configuration file", file: "/srv/c.toml", path: "/srv",
                                         problem: .directoryWritableByGroupOrOthers(mode: 0o040777))
        #expect(directory.description
            == "strict modes: configuration file /srv/c.toml: directory /srv is writable by group or others without the sticky bit (mode 0777)")
    }
}
