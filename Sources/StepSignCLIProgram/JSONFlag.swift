import ArgumentParser

/// `--json` for commands that print data.
struct JSONFlag: ParsableArguments {
    @Flag(help: "Print JSON for scripts instead of prose.") var json = false
}
