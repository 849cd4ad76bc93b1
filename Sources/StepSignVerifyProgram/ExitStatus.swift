import ArgumentParser

/// The exit statuses of SPEC §8.
enum ExitStatus: Int32 {
    case valid = 0
    case invalid = 1
    case badInput = 2

    var exitCode: ExitCode { ExitCode(rawValue) }
}
