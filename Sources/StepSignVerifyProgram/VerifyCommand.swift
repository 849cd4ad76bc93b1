import ArgumentParser
import Foundation
import StepSignCrypto
import StepSignFormat
import StepSignProtocol

/// `stepsign-verify [--keys FILE] [--payload TEXT | --payload-file F] [--user U] [--min-level N]
/// [--proof FILE --log-key VKEY … [--witness VKEY … --quorum K]] [--json] [JWS | -]`
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify one signature (the default command)."
    )

    @OptionGroup var keyOptions: KeysOptions
    @OptionGroup var proofOptions: ProofOptions

    @Option(help: "The payload the signature must carry (compared byte for byte as UTF-8).")
    var payload: String?

    @Option(name: .customLong("payload-file"), help: ArgumentHelp("Read the expected payload from a file, exactly as is (no newline stripped).", valueName: "file"))
    var payloadFile: String?

    @Option(help: "The user the signature must be for (the sub claim).")
    var user: String?

    @Option(name: .customLong("min-level"), help: ArgumentHelp(
        "The lowest authentication level accepted (default 1: a level-0 signature, made with no authentication, is valid only with --min-level 0).",
        valueName: "n"))
    var minLevel = 1

    @Flag(help: "Print one JSON object: valid, reason, message, kid, claims, source, file, logIndex, treeSize, origin, cosignedBy (null where there is nothing to say).")
    var json = false

    @Argument(help: "The JWS; @FILE or the name of a readable file reads it from that file; - or nothing reads it from stdin.")
    var jws: String?

    func validate() throws {
        if payload != nil && payloadFile != nil {
            throw ValidationError("--payload and --payload-file cannot be used together")
        }
        if minLevel < 0 || minLevel > 4 {
            throw ValidationError("--min-level must be from 0 to 4")
        }
    }

    /// The `--json` report; every field is present, null when there is nothing to say. `source`
    /// is where the JWS came from ("argument", "file" or "stdin"), `file` the file it was read
    /// from for source "file"; `logIndex`, `treeSize` and `origin` say where a checked proof
    /// places the signature.
    static func report(valid: Bool, reason: String? = nil, message: String? = nil, kid: String? = nil,
                       claims: SignatureClaims? = nil, source: String?, file: String?,
                       proven: ProvenPlace? = nil) -> JSONValue {
        [
            "valid": .bool(valid), "reason": reason.jsonValue, "message": message.jsonValue, "kid": kid.jsonValue,
            // The claims exactly as the signature carries them.
            "claims": claims.flatMap { try? JSONParser.parse($0.jsonBytes) } ?? .null,
            "source": source.jsonValue, "file": file.jsonValue,
            "logIndex": proven.map { .int($0.index) } ?? .null,
            "treeSize": proven.map { .int($0.checkpoint.size) } ?? .null,
            "origin": proven.map { .string($0.checkpoint.origin) } ?? .null,
            "cosignedBy": proven.map { .array($0.cosigners.map { .string($0) }) } ?? .null,
        ]
    }

    /// Where a checked proof places the signature: its index in the log of a signed checkpoint,
    /// and the witnesses given whose cosignatures of that checkpoint verify.
    struct ProvenPlace {
        var index: Int64
        var checkpoint: LogCheckpoint
        var cosigners: [String]
    }

    func run() throws {
        let trusted: TrustedKeys
        let compact: String
        let expectedPayload: [UInt8]?
        let proof: ProofOptions.Loaded?
        let input = JWSInput(argument: jws)
        do throws(InputFiles.Failure) {
            trusted = try keyOptions.load()
            proof = try proofOptions.load()
            compact = try input.read()
            if !json, let file = input.file {
                Console.error("JWS read from the file \(file)")
            }
            if let payloadFile {
                let data = try InputFiles.bytes(payloadFile)
                guard String(validating: data, as: UTF8.self) != nil else {
                    throw InputFiles.Failure(description: "\(payloadFile) is not UTF-8 text")
                }
                expectedPayload = Array(data)
            } else {
                expectedPayload = payload.map { Array($0.utf8) }
            }
        } catch {
            failInput(error.description, input: input)
        }

        // A proof is checked first (for a revoked key, its index decides), unless the text is
        // not a JWS at all: that is bad input, whatever the proof says.
        var proven: ProvenPlace?
        if let proof, (try? JWS.parse(compact)) != nil {
            do {
                let checkpoint = try proof.proof.verify(leaf: Array(compact.utf8), logKeys: proof.logKeys,
                                                        witnesses: proof.witnesses, quorum: proof.quorum)
                let cosigners = proof.proof.checkpoint.cosigners(proof.witnesses).map(\.key.name)
                proven = ProvenPlace(index: proof.proof.index, checkpoint: checkpoint, cosigners: cosigners)
            } catch {
                fail(.notInLog(error.description), claims: nil, kid: nil, input: input)
            }
        }
        let claims: SignatureClaims
        do {
            claims = try StepSignSignature.verify(compact, trustedKeys: trusted, logIndex: proven?.index)
        } catch {
            fail(error, claims: nil, kid: nil, input: input)
        }
        let kid = (try? JWS.parse(compact))?.header.kid
        if claims.authLevel < minLevel {
            fail(.levelTooLow(level: claims.authLevel, minimum: minLevel), claims: claims, kid: kid, input: input)
        }
        // Byte comparison, not String ==, which would equate canonically equivalent text.
        if let expectedPayload, Array(claims.payload.utf8) != expectedPayload {
            fail(.payloadMismatch, claims: claims, kid: kid, input: input)
        }
        if let user, Array(claims.sub.utf8) != Array(user.utf8) {
            fail(.userMismatch, claims: claims, kid: kid, input: input)
        }
        if json {
            Console.json(Self.report(valid: true, kid: kid, claims: claims, source: input.source, file: input.file, proven: proven))
        } else {
            Console.out("valid: signature \(claims.jti) for user \(claims.sub) by \(claims.iss), iat \(claims.iat), kid \(kid ?? "?"), authenticator \(claims.authenticatorUsed)")
            if let batch = claims.batch {
                Console.out("batch: item \(batch.index + 1) of \(batch.count) in batch \(batch.id), manifest root \(batch.root)")
            }
            if let approvals = claims.approvals {
                Console.out("approved by: " + approvals.map { "\($0.user) (\($0.authenticator))" }.joined(separator: ", "))
            }
            if let proven {
                Console.out("in the log: index \(proven.index) of \(proven.checkpoint.size) in \(proven.checkpoint.origin)"
                    + (proven.cosigners.isEmpty ? "" : ", cosigned by \(proven.cosigners.joined(separator: ", "))"))
            }
        }
    }

    /// Reports `error` and exits 1 (invalid, mismatch) or 2 (bad input). Claims are shown
    /// only when the signature was valid.
    private func fail(_ error: SignatureVerificationError, claims: SignatureClaims?, kid: String?, input: JWSInput) -> Never {
        let status: ExitStatus = error.isBadInput ? .badInput : .invalid
        if json {
            Console.json(Self.report(valid: false, reason: error.reason, message: error.description, kid: kid, claims: claims,
                                     source: input.source, file: input.file))
        }
        if error.isBadInput {
            // Say how the argument was taken: a mistyped file name is read as a JWS.
            let note = input.mayBeMistypedFile ? " (the argument was taken as a JWS: no readable file has that name)" : ""
            Console.error(error.description + note)
        } else if !json {
            Console.out("invalid: \(error.description)")
        }
        VerifyCommand.exit(withError: status.exitCode)
    }

    /// Reports unreadable input (keys, payload file, stdin) and exits 2.
    private func failInput(_ message: String, input: JWSInput) -> Never {
        if json {
            Console.json(Self.report(valid: false, reason: "bad-input", message: message, source: input.source, file: input.file))
        }
        Console.error(message)
        VerifyCommand.exit(withError: ExitStatus.badInput.exitCode)
    }
}
