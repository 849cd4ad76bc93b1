/// The programs one binary can be, chosen by the name it is run under (`argv[0]`), as
/// BusyBox does: the package installs one binary as `/usr/bin/stepsign` with the other names
/// as symbolic links to it, so the Swift runtime, Foundation and its ICU data, SwiftNIO and
/// libcrypto's wrappers are on disk once instead of once per program.
enum MulticallProgram: String, CaseIterable {
    case stepsignd
    case stepsign
    case stepsignVerify = "stepsign-verify"
    case stepsignWitness = "stepsign-witness"
    case stepsignWitnessd = "stepsign-witnessd"

    /// The program for `argv0`, by its last path component; any other name is `stepsign`, so
    /// a renamed copy of the binary is still the CLI.
    init(argv0: String) {
        let name = argv0.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? argv0
        self = MulticallProgram(rawValue: name) ?? .stepsign
    }
}
