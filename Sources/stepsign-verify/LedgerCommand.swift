import ArgumentParser
import Foundation
import StepSignCrypto
import StepSignFormat

/// `stepsign-verify ledger FILE --keys FILE`: checks every JWS of an exported ledger (JSON
/// lines of `LedgerExportEntry`) and its hash chain.
struct LedgerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger",
        abstract: "Verify an exported ledger: every signature and the hash chain."
    )

    @Argument(help: "The exported ledger (JSON lines); - reads stdin.")
    var file: String

    @OptionGroup var keyOptions: KeysOptions

    @Flag(help: "Print one JSON object: ok, entries, firstBadSeq, reason.")
    var json = false

    /// The `--json` report; the fields of `admin.auditVerify` plus the reason.
    struct Report: Encodable {
        var ok: Bool
        var entries: Int
        var firstBadSeq: Int64?
        var reason: String?
    }

    func run() throws {
        let trusted: TrustedKeys
        let entries: [LedgerExportEntry]
        do throws(InputFiles.Failure) {
            trusted = try keyOptions.load()
            entries = try readEntries()
        } catch {
            Console.error(error.description)
            throw ExitStatus.badInput.exitCode
        }

        // The first bad position (0-based) and why, over the three kinds of check.
        var firstBad: (index: Int, reason: String)?
        func note(_ index: Int, _ reason: String) {
            if firstBad == nil || index < firstBad!.index { firstBad = (index, reason) }
        }
        var links: [LedgerLink] = []
        for (index, entry) in entries.enumerated() {
            do {
                links.append(try entry.ledgerLink())
            } catch {
                note(index, "a hash is not 64 hex digits")
                break
            }
        }
        let audit = LedgerChain.audit(links)
        if !audit.ok { note(audit.entries - 1, "the hash chain breaks (changed, removed, inserted or reordered entry)") }
        for (index, entry) in entries.enumerated() {
            if let firstBad, firstBad.index <= index { break }
            do {
                let claims = try StepSignSignature.verify(entry.payloadSignature, trustedKeys: trusted)
                if claims.jti != entry.signatureID { note(index, "signatureID differs from the JWS jti"); break }
            } catch {
                note(index, "signature: \(error.description)")
                break
            }
        }

        if let firstBad {
            let seq = Int64(firstBad.index + 1) // the sequence number expected at that position
            if json {
                Console.json(Report(ok: false, entries: firstBad.index + 1, firstBadSeq: seq, reason: firstBad.reason))
            } else {
                Console.out("ledger broken: first bad seq \(seq): \(firstBad.reason) (\(firstBad.index + 1) of \(entries.count) entries checked)")
            }
            throw ExitStatus.invalid.exitCode
        }
        if json {
            Console.json(Report(ok: true, entries: entries.count))
        } else {
            Console.out("ledger ok: \(entries.count) entries checked")
        }
    }

    /// The entries, one per non-empty line.
    private func readEntries() throws(InputFiles.Failure) -> [LedgerExportEntry] {
        let text = try InputFiles.text(file)
        let decoder = JSONDecoder()
        var entries: [LedgerExportEntry] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.allSatisfy(\.isWhitespace) { continue }
            guard let entry = try? decoder.decode(LedgerExportEntry.self, from: Data(line.utf8)) else {
                throw InputFiles.Failure(description: "\(file) line \(number + 1): not a ledger entry")
            }
            entries.append(entry)
        }
        return entries
    }
}
