/// An `admin.*` operation of SPEC §3.2 with its parameters, decoded once.
public enum AdminOperation: Sendable {
    case addUser(user: String, password: String, mustChangePassword: Bool)
    case removeUser(user: String)
    case unlockUser(user: String)
    case expirePassword(user: String)
    case listUsers
    /// `publicKey` is checked as a JWK by the engine (nil when absent).
    case enrollDeviceKey(user: String, publicKey: JSONValue?, label: String?, fido2: JSONValue? = nil)
    case revokeDeviceKey(user: String, deviceKeyID: String)
    case rotateKey
    /// `admin.rotateLogKey`: a new Ed25519 log key; both sign every note for
    /// `ledger.log_key_overlap_entries` entries (SPEC §2).
    case rotateLogKey
    case revokeKey(kid: String)
    /// `admin.endorseKey {endorsement}`: stores the cluster root's endorsement of a key (SPEC
    /// §5.4, what `stepsign admin cluster endorse` sends).
    case endorseKey(endorsement: String)
    case listKeys
    case auditVerify
    case exportLedger(afterSeq: Int, limit: Int)
    /// `admin.addCosignatures {treeSize, cosignatures}`: witnesses' cosignature lines of the
    /// stored checkpoint of that size (SPEC §5.6), what `stepsign-witnessd` sends.
    case addCosignatures(treeSize: Int, cosignatures: [String])
    /// `admin.awaitCheckpointRequest {waitSeconds}`: returns as soon as a `waitForProof` wants
    /// witnesses to cosign a new checkpoint, or after `waitSeconds` (SPEC §5.6); what
    /// `stepsign-witnessd` asks between its rounds.
    case awaitCheckpointRequest(waitSeconds: Int)
    /// `admin.addGroupMember {group, user}` / `admin.removeGroupMember`: the stepsign user
    /// groups approver lists name (SPEC §3.4).
    case addGroupMember(group: String, user: String)
    case removeGroupMember(group: String, user: String)
    case listGroups
    /// `admin.backup`: a consistent copy of the SQLite store in the state directory's
    /// `backups/`, made while serving (issue 27), for `stepsign admin backup --to FILE`.
    case backup
    /// `admin.recover`: a new log epoch after a restore that lost entries (SPEC §5.5, issue 27).
    case recover

    /// Decodes the admin operation and parameters of `request`.
    public init(_ request: Request) throws(StepSignError) {
        switch request.op {
        case "admin.addUser":
            try request.allowOnly(["user", "password", "mustChangePassword"])
            self = .addUser(user: try request.string("user"), password: try request.string("password"),
                            mustChangePassword: try request.optionalBool("mustChangePassword") ?? false)
        case "admin.removeUser":
            try request.allowOnly(["user"])
            self = .removeUser(user: try request.string("user"))
        case "admin.unlockUser":
            try request.allowOnly(["user"])
            self = .unlockUser(user: try request.string("user"))
        case "admin.expirePassword":
            try request.allowOnly(["user"])
            self = .expirePassword(user: try request.string("user"))
        case "admin.listUsers":
            try request.allowOnly([])
            self = .listUsers
        case "admin.enrollDeviceKey":
            try request.allowOnly(["user", "publicKey", "label", "fido2"])
            self = .enrollDeviceKey(user: try request.string("user"), publicKey: request.member("publicKey"),
                                    label: try request.optionalString("label"), fido2: request.member("fido2"))
        case "admin.revokeDeviceKey":
            try request.allowOnly(["user", "deviceKeyId"])
            self = .revokeDeviceKey(user: try request.string("user"), deviceKeyID: try request.string("deviceKeyId"))
        case "admin.addGroupMember":
            try request.allowOnly(["group", "user"])
            self = .addGroupMember(group: try request.string("group"), user: try request.string("user"))
        case "admin.removeGroupMember":
            try request.allowOnly(["group", "user"])
            self = .removeGroupMember(group: try request.string("group"), user: try request.string("user"))
        case "admin.listGroups":
            try request.allowOnly([])
            self = .listGroups
        case "admin.rotateKey":
            try request.allowOnly([])
            self = .rotateKey
        case "admin.rotateLogKey":
            try request.allowOnly([])
            self = .rotateLogKey
        case "admin.revokeKey":
            try request.allowOnly(["kid"])
            self = .revokeKey(kid: try request.string("kid"))
        case "admin.endorseKey":
            try request.allowOnly(["endorsement"])
            self = .endorseKey(endorsement: try request.string("endorsement"))
        case "admin.backup":
            try request.allowOnly([])
            self = .backup
        case "admin.recover":
            try request.allowOnly([])
            self = .recover
        case "admin.listKeys":
            try request.allowOnly([])
            self = .listKeys
        case "admin.auditVerify":
            try request.allowOnly([])
            self = .auditVerify
        case "admin.exportLedger":
            try request.allowOnly(["afterSeq", "limit"])
            self = .exportLedger(afterSeq: try request.optionalInt("afterSeq", in: 0...Int.max) ?? 0,
                                 limit: try request.optionalInt("limit", in: 1...10_000) ?? 1000)
        case "admin.addCosignatures":
            try request.allowOnly(["treeSize", "cosignatures"])
            guard let lines = request.member("cosignatures")?.arrayValue, (1...64).contains(lines.count),
                  lines.allSatisfy({ (1...1024).contains($0.stringValue?.utf8.count ?? 0) })
            else { throw .invalid("\"cosignatures\" must be 1 to 64 signature lines (strings of at most 1024 bytes)") }
            self = .addCosignatures(treeSize: try request.int("treeSize", in: 1...Int(Int64.max)),
                                    cosignatures: lines.compactMap(\.stringValue))
        case "admin.awaitCheckpointRequest":
            try request.allowOnly(["waitSeconds"])
            self = .awaitCheckpointRequest(waitSeconds: try request.optionalInt("waitSeconds", in: 0...300) ?? 0)
        default:
            throw .invalid("unknown operation \"\(request.op)\"")
        }
    }
}
