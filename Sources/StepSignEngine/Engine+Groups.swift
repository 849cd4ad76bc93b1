import StepSignProtocol
import StepSignStorage

/// Groups of stepsign users that `[[approval]]` rules name as `group:NAME` (SPEC §3.4). A
/// membership is a sealed row bound to its `groupMemberAdded` event; a removal is recorded
/// first, so the log decides even if the row stays (``Engine/groupMembershipHolds(_:)``).
extension Engine {
    /// `admin.addGroupMember`: records `groupMemberAdded`, then stores the membership bound to it.
    func addGroupMember(group: String, user: String, context: RequestContext) async throws -> Reply {
        try Self.validateGroupName(group)
        try UserName.validate(user)
        guard try await credentials.store.user(named: user) != nil else { throw StepSignError.invalid("no such user \"\(user)\"") }
        if let current = try await approvals.store.groupMembers().first(where: { ScalarText.equal($0.group, group) && ScalarText.equal($0.user, user) }),
           try await groupMembershipHolds(current) {
            return Reply(result: [:])
        }
        let entry = try await recordEvent(.groupMemberAdded, user: user, details: [("group", .string(group))], context: context)
        try await approvals.store.addGroupMember(GroupMember(group: group, user: user, addedSeq: entry.seq))
        logger.notice("group member added", metadata: ["group": .string(group), "user": .string(user)])
        return Reply(result: [:])
    }

    /// `admin.removeGroupMember`: records `groupMemberRemoved` (from then on the membership no
    /// longer holds), then deletes the row.
    func removeGroupMember(group: String, user: String, context: RequestContext) async throws -> Reply {
        try Self.validateGroupName(group)
        guard let current = try await approvals.store.groupMembers().first(where: { ScalarText.equal($0.group, group) && ScalarText.equal($0.user, user) }),
              try await groupMembershipHolds(current) else {
            throw StepSignError.invalid("\"\(user)\" is not a member of group \"\(group)\"")
        }
        try await recordEvent(.groupMemberRemoved, user: user, details: [("group", .string(group))], context: context)
        _ = try await approvals.store.removeGroupMember(group: group, user: user)
        logger.notice("group member removed", metadata: ["group": .string(group), "user": .string(user)])
        return Reply(result: [:])
    }

    /// `admin.listGroups`: `{"groups": [{"group", "members"}]}`, the memberships that hold.
    func listGroups() async throws -> Reply {
        var groups: [(String, [JSONValue])] = []
        for member in try await approvals.store.groupMembers() where try await groupMembershipHolds(member) {
            if groups.last?.0 == member.group {
                groups[groups.count - 1].1.append(.string(member.user))
            } else {
                groups.append((member.group, [.string(member.user)]))
            }
        }
        return Reply(result: ["groups": .array(groups.map { .object([("group", .string($0.0)), ("members", .array($0.1))]) })])
    }

    /// A group name: 1–64 characters, none of them whitespace, control, format, `:` or `/`.
    static func validateGroupName(_ name: String) throws(StepSignError) {
        guard (1...64).contains(name.count), UserIDForm.isNFC(name),
              !name.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0 == ":" || $0 == "/" || SigningRequest.isHidden($0) })
        else { throw .invalid("a group name is 1 to 64 characters in Unicode NFC without spaces, \":\" or \"/\"") }
    }
}
