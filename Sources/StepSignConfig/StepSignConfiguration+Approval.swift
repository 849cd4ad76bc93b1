import StepSignProtocol

extension StepSignConfiguration {
    /// One `[[approval]]` rule (SPEC §3.4): signing requests it matches are signed only once
    /// `required` of its `approvers` (none of them the requester) have each stepped up at
    /// (`level`, `type`) to approve, within `timeoutSeconds`.
    public struct ApprovalRule: Sendable, Equatable, Hashable {
        /// `reason_prefix`: the rule matches requests whose reason starts with it ("" matches any reason).
        public var reasonPrefix: String
        /// `min_level`: the rule matches requests at this level or above (nil: any level).
        public var minLevel: Int?
        /// `approvers`: user IDs and `group:NAME` of stepsign user groups.
        public var approvers: [String]
        /// `required`: how many different approvers must approve (K).
        public var required: Int
        /// `level` and `type`: the step-up each approver answers, (1, 0) or (4, 1).
        public var level: Int
        public var type: Int
        /// `timeout_seconds`: how long a request waits for its approvals.
        public var timeoutSeconds: Int

        public init(reasonPrefix: String = "", minLevel: Int? = nil, approvers: [String], required: Int = 1,
                    level: Int = 1, type: Int = 0, timeoutSeconds: Int = 3600) {
            self.reasonPrefix = reasonPrefix
            self.minLevel = minLevel
            self.approvers = approvers
            self.required = required
            self.level = level
            self.type = type
            self.timeoutSeconds = timeoutSeconds
        }

        /// Whether a request for `reason` at `level` needs this rule's approvals. The prefix is
        /// compared by Unicode scalars (SPEC §3): `"payment:\u{301} wire"` starts with `payment:`.
        public func matches(reason: String, level: Int) -> Bool {
            ScalarText.hasPrefix(reason, reasonPrefix) && level >= (minLevel ?? 0)
        }
    }

    /// The first rule that matches a request for `reason` at `level` (first match wins), or nil.
    public func approvalRule(reason: String, level: Int) -> ApprovalRule? {
        approvals.first { $0.matches(reason: reason, level: level) }
    }
}

extension StepSignConfiguration.ApprovalRule {
    /// Reads the `[[approval]]` tables of the root, in order.
    static func all(_ root: ConfigTableReader) throws(ConfigError) -> [Self] {
        guard let value = root.table["approval"] else { return [] }
        guard let tables = value.array, tables.allSatisfy({ $0.table != nil }) else {
            throw root.error("approval", value, "expected [[approval]] tables")
        }
        var rules: [Self] = []
        for (index, element) in tables.enumerated() {
            guard let table = element.table else { continue }
            rules.append(try Self(ConfigTableReader(file: root.file, path: "approval[\(index + 1)]", table: table)))
        }
        return rules
    }

    init(_ t: ConfigTableReader) throws(ConfigError) {
        try t.rejectUnknown(["reason_prefix", "min_level", "approvers", "required", "level", "type", "timeout_seconds"])
        guard t.table["reason_prefix"] != nil || t.table["min_level"] != nil else {
            throw t.error("reason_prefix", nil, "an [[approval]] needs reason_prefix and/or min_level")
        }
        guard t.table["approvers"] != nil else { throw t.error("approvers", nil, "an [[approval]] needs approvers") }
        let approvers = try t.stringArray("approvers", default: []) { entry in
            guard Check.isNFC(entry) else { return "must be in Unicode NFC, as user IDs and group names are (SPEC 3)" }
            if ScalarText.hasPrefix(entry, "group:") { return Check.name(String(entry.dropFirst(6))).map { "group:NAME: \($0)" } }
            return Check.nonEmptyLine(entry)
        }
        guard !approvers.isEmpty else { throw t.error("approvers", t.table["approvers"], "must name at least one user or group:NAME") }
        guard !ScalarText.hasDuplicates(approvers) else {
            throw t.error("approvers", t.table["approvers"], "names one approver twice")
        }
        let required = try t.integer("required", default: 1, in: 1...100)
        if approvers.allSatisfy({ !ScalarText.hasPrefix($0, "group:") }), required > approvers.count {
            throw t.error("required", t.table["required"], "is more than the \(approvers.count) approvers named")
        }
        let level = try t.integer("level", default: 1, in: 0...100)
        let type = try t.integer("type", default: 0, in: 0...100)
        guard (level, type) == (1, 0) || (level, type) == (4, 1) else {
            throw t.error(t.table["level"] != nil ? "level" : "type", t.table["level"] ?? t.table["type"],
                          "an approver steps up at level 1 type 0, or level 4 type 1")
        }
        self.init(
            reasonPrefix: try t.string("reason_prefix", default: "") { prefix in
                prefix.unicodeScalars.contains { $0.properties.generalCategory == .control } ? "must not contain control characters" : nil
            },
            minLevel: t.table["min_level"] == nil ? nil : try t.integer("min_level", default: 0, in: 0...4),
            approvers: approvers, required: required, level: level, type: type,
            timeoutSeconds: try t.integer("timeout_seconds", default: 3600, in: 10...604_800)
        )
    }
}
