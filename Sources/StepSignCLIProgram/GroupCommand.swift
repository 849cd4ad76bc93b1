import ArgumentParser
import StepSignProtocol

/// `stepsign admin group add|remove|list`: the stepsign user groups `[[approval]]` rules name
/// as `group:NAME` (SPEC §3.4). Each change is a log event.
struct GroupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "group", abstract: "Manage the user groups approvers come from.",
                                                    subcommands: [Add.self, Remove.self, List.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a user to a group.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "The group.") var group: String
        @Option(help: "The user ID.") var user: String
        func run() throws {
            try runReportingErrors {
                _ = try global.connect().call("admin.addGroupMember", ["group": group, "user": user]).requireAccepted("admin.addGroupMember")
                print("added \(user) to \(group)")
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a user from a group.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "The group.") var group: String
        @Option(help: "The user ID.") var user: String
        func run() throws {
            try runReportingErrors {
                _ = try global.connect().call("admin.removeGroupMember", ["group": group, "user": user])
                    .requireAccepted("admin.removeGroupMember")
                print("removed \(user) from \(group)")
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the groups and their members.",
                                                        discussion: "--json prints an array of {group, members}.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: JSONFlag
        func run() throws {
            try runReportingErrors {
                let groups = try global.connect().call("admin.listGroups").requireAccepted("admin.listGroups").result?["groups"]?.arrayValue ?? []
                if output.json { return JSONOutput.print(.array(groups)) }
                if groups.isEmpty { print("no groups") }
                for group in groups {
                    let members = group["members"]?.arrayValue?.compactMap(\.stringValue) ?? []
                    print("\(group["group"]?.stringValue ?? "?"): \(members.joined(separator: ", "))")
                }
            }
        }
    }
}
