import Foundation
import StepSignProtocol
import Testing

/// Every operation of SPEC §3.2 is decoded once, with its parameters typed and checked.
@Suite("Operation decoding")
struct OperationTests {
    private func operation(_ text: String) throws -> StepSignProtocol.Operation {
        try StepSignProtocol.Operation(Request.decode(Array(text.utf8)).get())
    }

    /// Each operation name with a request that carries every parameter it takes.
    static let complete: [String] = [
        #"{"id":1,"op":"authenticateUserAndSignData","payload":"p","reason":"r","authLevel":1,"authenticatorType":1,"user":"u"}"#,
        #"{"id":1,"op":"authenticateUserAndSignBatch","items":[{"payload":"p","reason":"r"}],"authLevel":1,"authenticatorType":0,"user":"u"}"#,
        #"{"id":1,"op":"setUser","user":"u"}"#,
        #"{"id":1,"op":"setPassword","password":"x","challengeMode":0}"#,
        #"{"id":1,"op":"updatePassword","currentPassword":"a","newPassword":"b","challengeMode":2}"#,
        #"{"id":1,"op":"getAllChallenges"}"#,
        #"{"id":1,"op":"initiateUpdateFlowForCredential","credentialType":"password"}"#,
        #"{"id":1,"op":"forgotPassword","user":"u"}"#,
        #"{"id":1,"op":"resendActivationCode"}"#,
        #"{"id":1,"op":"setActivationCode","activationCode":"c"}"#,
        #"{"id":1,"op":"setUserConsentForLDA","consent":true}"#,
        #"{"id":1,"op":"setLDASignature","deviceKeyId":"k","signature":"s"}"#,
        #"{"id":1,"op":"setIDVBiometricAssertion","assertion":"a"}"#,
        #"{"id":1,"op":"enrollDeviceKey","publicKey":{"kty":"EC"},"label":"l"}"#,
        #"{"id":1,"op":"logOff"}"#,
        #"{"id":1,"op":"resetAuthState"}"#,
        #"{"id":1,"op":"resetAuthenticateUserAndSignDataState"}"#,
        #"{"id":1,"op":"getPublicKeys","format":"pem"}"#,
        #"{"id":1,"op":"getSignature","signatureID":"s"}"#,
        #"{"id":1,"op":"getCheckpoint"}"#,
        #"{"id":1,"op":"getInclusionProof","signatureID":"s","treeSize":3}"#,
        #"{"id":1,"op":"getConsistencyProof","fromSize":1,"toSize":3}"#,
        #"{"id":1,"op":"waitForProof","signatureID":"s","quorum":2,"timeoutSeconds":30}"#,
        #"{"id":1,"op":"status"}"#,
        #"{"id":1,"op":"listApprovals"}"#,
        #"{"id":1,"op":"approveRequest","approvalID":"a"}"#,
        #"{"id":1,"op":"denyRequest","approvalID":"a","reason":"r"}"#,
        #"{"id":1,"op":"getApproval","approvalID":"a","waitSeconds":5}"#,
        #"{"id":1,"op":"unlockAgent","user":"u","authLevel":1,"authenticatorType":0,"seconds":60}"#,
        #"{"id":1,"op":"lockAgent"}"#,
        #"{"id":1,"op":"admin.addUser","user":"u","password":"p","mustChangePassword":true}"#,
        #"{"id":1,"op":"admin.removeUser","user":"u"}"#,
        #"{"id":1,"op":"admin.unlockUser","user":"u"}"#,
        #"{"id":1,"op":"admin.expirePassword","user":"u"}"#,
        #"{"id":1,"op":"admin.listUsers"}"#,
        #"{"id":1,"op":"admin.enrollDeviceKey","user":"u","publicKey":{},"label":"l"}"#,
        #"{"id":1,"op":"admin.revokeDeviceKey","user":"u","deviceKeyId":"k"}"#,
        #"{"id":1,"op":"admin.addGroupMember","group":"g","user":"u"}"#,
        #"{"id":1,"op":"admin.removeGroupMember","group":"g","user":"u"}"#,
        #"{"id":1,"op":"admin.listGroups"}"#,
        #"{"id":1,"op":"admin.rotateKey"}"#,
        #"{"id":1,"op":"admin.rotateLogKey"}"#,
        #"{"id":1,"op":"admin.revokeKey","kid":"k"}"#,
        #"{"id":1,"op":"admin.endorseKey","endorsement":"e"}"#,
        #"{"id":1,"op":"admin.listKeys"}"#,
        #"{"id":1,"op":"admin.auditVerify"}"#,
        #"{"id":1,"op":"admin.addCosignatures","treeSize":3,"cosignatures":["\u2014 w x"]}"#,
        #"{"id":1,"op":"admin.awaitCheckpointRequest","waitSeconds":5}"#,
        #"{"id":1,"op":"admin.backup"}"#,
        #"{"id":1,"op":"admin.recover"}"#,
        #"{"id":1,"op":"admin.exportLedger","afterSeq":5,"limit":10}"#,
    ]

    /// The operation names the decoders know: every `case "name":` of `Operation.init` and
    /// `AdminOperation.init`, read from their source, so an operation added there without a line
    /// in ``complete`` (and so without the tests below) fails ``everyOperationIsListed()``.
    static func decodedNames() throws -> Set<String> {
        let requests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/StepSignProtocol/Requests")
        var names: Set<String> = []
        for file in ["Operation.swift", "AdminOperation.swift"] {
            let text = try String(contentsOf: requests.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: /case "([A-Za-z.]+)":/) { names.insert(String(match.output.1)) }
        }
        return names
    }

    @Test("the list holds each operation the decoders know, once (SPEC §3.2)")
    func everyOperationIsListed() throws {
        let listed = try Self.complete.map { try Request.decode(Array($0.utf8)).get().op }
        let known = try Self.decodedNames()
        #expect(known.count > 40, "the decoders' source was read: \(known.sorted())")
        #expect(Set(listed) == known, "not listed: \(known.subtracting(listed).sorted()); not an operation: \(Set(listed).subtracting(known).sorted())")
        #expect(listed.count == Set(listed).count, "listed twice: \(listed.filter { op in listed.filter { $0 == op }.count > 1 })")
    }

    @Test("every operation decodes with every parameter it takes", arguments: complete)
    func decodesComplete(_ line: String) throws {
        _ = try operation(line)
    }

    @Test("every operation refuses a member it does not take, by name", arguments: complete)
    func refusesUnknownMember(_ line: String) throws {
        let op = try Request.decode(Array(line.utf8)).get().op
        let extended = String(line.dropLast()) + #","extra":1}"#
        #expect(throws: StepSignError.invalid("unknown parameter \"extra\" for \(op)")) { try operation(extended) }
    }

    /// The line of ``complete`` for `op`.
    private func line(_ op: String) throws -> String {
        try #require(Self.complete.first { $0.contains("\"op\":\"\(op)\"") }, "no line for \(op)")
    }

    @Test("parameters arrive typed")
    func typed() throws {
        guard case let .authenticateUserAndSignData(parameters) = try operation(Self.complete[0]) else {
            Issue.record("wrong case"); return
        }
        #expect(parameters.payload == "p" && parameters.reason == "r" && parameters.user == "u")
        #expect(parameters.authLevel == 1 && parameters.authenticatorType == 1)
        guard case let .admin(.exportLedger(afterSeq, limit)) = try operation(line("admin.exportLedger")) else {
            Issue.record("wrong case"); return
        }
        #expect(afterSeq == 5 && limit == 10)
        guard case let .authenticateUserAndSignBatch(batch) = try operation(line("authenticateUserAndSignBatch")) else {
            Issue.record("wrong case"); return
        }
        #expect(batch.items == [SignBatchParameters.Item(payload: "p", reason: "r")] && batch.user == "u")
        #expect(batch.authLevel == 1 && batch.authenticatorType == 0)
        guard case let .getApproval(approvalID, waitSeconds) = try operation(line("getApproval")) else {
            Issue.record("wrong case"); return
        }
        #expect(approvalID == "a" && waitSeconds == 5)
        guard case let .denyRequest(deniedID, reason) = try operation(line("denyRequest")) else {
            Issue.record("wrong case"); return
        }
        #expect(deniedID == "a" && reason == "r")
        guard case let .unlockAgent(unlock) = try operation(line("unlockAgent")) else {
            Issue.record("wrong case"); return
        }
        #expect(unlock.user == "u" && unlock.authLevel == 1 && unlock.authenticatorType == 0 && unlock.seconds == 60)
        guard case let .admin(.addGroupMember(group, user)) = try operation(line("admin.addGroupMember")) else {
            Issue.record("wrong case"); return
        }
        #expect(group == "g" && user == "u")
        guard case let .admin(.exportLedger(defaultAfter, defaultLimit)) = try operation(#"{"id":1,"op":"admin.exportLedger"}"#) else {
            Issue.record("wrong case"); return
        }
        #expect(defaultAfter == 0 && defaultLimit == 1000)
        guard case let .enrollDeviceKey(publicKey, label, fido2) = try operation(#"{"id":1,"op":"enrollDeviceKey"}"#) else {
            Issue.record("wrong case"); return
        }
        #expect(publicKey == nil && label == nil && fido2 == nil)
    }

    static let cosignatureLines = #""cosignatures" must be 1 to 64 signature lines (strings of at most 1024 bytes)"#

    @Test("missing, mistyped and out-of-range parameters are code 4 with their name")
    func badParameters() {
        let cases: [(String, String)] = [
            (#"{"id":1,"op":"setUser"}"#, #"missing parameter "user""#),
            (#"{"id":1,"op":"setUser","user":5}"#, #""user" must be a string"#),
            (#"{"id":1,"op":"setPassword","password":"x","challengeMode":101}"#, #""challengeMode" must be an integer from 0 to 100"#),
            (#"{"id":1,"op":"setPassword","password":"x","challengeMode":1.5}"#, #""challengeMode" must be an integer from 0 to 100"#),
            (#"{"id":1,"op":"setUserConsentForLDA"}"#, #"missing parameter "consent""#),
            (#"{"id":1,"op":"setUserConsentForLDA","consent":"yes"}"#, #""consent" must be true or false"#),
            (#"{"id":1,"op":"admin.exportLedger","limit":0}"#, #""limit" must be an integer from 1 to 10000"#),
            (#"{"id":1,"op":"admin.exportLedger","afterSeq":-1}"#, "\"afterSeq\" must be an integer from 0 to \(Int.max)"),
            (#"{"id":1,"op":"admin.addCosignatures","treeSize":3}"#, Self.cosignatureLines),
            (#"{"id":1,"op":"admin.addCosignatures","treeSize":3,"cosignatures":[]}"#, Self.cosignatureLines),
            (#"{"id":1,"op":"admin.addCosignatures","treeSize":3,"cosignatures":"x"}"#, Self.cosignatureLines),
            (#"{"id":1,"op":"admin.addCosignatures","treeSize":3,"cosignatures":[1]}"#, Self.cosignatureLines),
            (#"{"id":1,"op":"admin.addCosignatures","treeSize":3,"cosignatures":[""]}"#, Self.cosignatureLines),
            ("{\"id\":1,\"op\":\"admin.addCosignatures\",\"treeSize\":3,\"cosignatures\":[" + Array(repeating: "\"x\"", count: 65).joined(separator: ",") + "]}",
             Self.cosignatureLines),
            ("{\"id\":1,\"op\":\"admin.addCosignatures\",\"treeSize\":3,\"cosignatures\":[\"" + String(repeating: "x", count: 1025) + "\"]}",
             Self.cosignatureLines),
            (#"{"id":1,"op":"admin.addCosignatures","treeSize":0,"cosignatures":["x"]}"#, "\"treeSize\" must be an integer from 1 to \(Int64.max)"),
            (#"{"id":1,"op":"getConsistencyProof"}"#, #"missing parameter "fromSize""#),
            (#"{"id":1,"op":"waitForProof"}"#, #"missing parameter "signatureID""#),
            (#"{"id":1,"op":"waitForProof","signatureID":"s","timeoutSeconds":301}"#, #""timeoutSeconds" must be an integer from 0 to 300"#),
            (#"{"id":1,"op":"waitForProof","signatureID":"s","quorum":0}"#, #""quorum" must be an integer from 1 to 64"#),
            (#"{"id":1,"op":"admin.awaitCheckpointRequest","waitSeconds":301}"#, #""waitSeconds" must be an integer from 0 to 300"#),
        ]
        for (line, message) in cases {
            #expect(throws: StepSignError.invalid(message)) { try operation(line) }
        }
    }

    @Test("an unknown operation, user or admin, is code 4 naming it")
    func unknown() {
        #expect(throws: StepSignError.invalid(#"unknown operation "frobnicate""#)) { try operation(#"{"id":1,"op":"frobnicate"}"#) }
        #expect(throws: StepSignError.invalid(#"unknown operation "admin.frobnicate""#)) {
            try operation(#"{"id":1,"op":"admin.frobnicate"}"#)
        }
    }
}
