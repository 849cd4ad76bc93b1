#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Runs the program that obtains an IDV assertion: `CMD NONCE CHALLENGE`, no shell; the
/// assertion is its standard output. `CHALLENGE` is the `getIDVBiometric` challenge as the
/// daemon sent it (base64url of the operation text): the IDV server shows that operation and
/// puts `txn` = base64url(SHA-256(the decoded text)) in its assertion (SPEC §3.2).
enum IDVCommand {
    static func run(_ command: String, nonce: String, challenge: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command)
        process.arguments = [nonce, challenge]
        let output = Pipe()
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            throw CLIError("cannot run \(command): \(error)", exitCode: 2)
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CLIError("\(command) exited with status \(process.terminationStatus)")
        }
        let assertion = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !assertion.isEmpty else { throw CLIError("\(command) printed no assertion") }
        return assertion
    }
}
