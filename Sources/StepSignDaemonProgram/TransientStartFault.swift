import ArgumentParser
import Logging
import StepSignStorage

/// A start step that failed with a fault that may pass (``TransientFault``: EIO, ENOSPC, EDQUOT,
/// ENOMEM, EMFILE, … under the error, or SQLite's disk I/O error, full disk or busy database)
/// ends the start with exit 74 (EX_IOERR), which the unit's `Restart=on-failure` restarts two
/// seconds later; a step refused for a setting (a permission, a mode, a missing file, a wrong
/// passphrase) keeps exit 78 (EX_CONFIG), which `RestartPreventExitStatus=78` leaves to the
/// operator. Before, both were 78, and a full disk being cleaned or a flaky volume at start kept
/// the daemon down for good (docs/decisions.md, "A transient fault at start exits 74").
enum TransientStartFault {
    /// EX_IOERR (sysexits.h): "an error occurred while doing I/O on some file".
    static let exitStatus: Int32 = 74

    /// When `error` is a transient fault: says so at critical, naming the path (the one the error
    /// names, else `path`: the file or directory of the step) and the errno's text, and on
    /// standard error, then returns the exit to throw. Nil otherwise: the caller refuses the
    /// start as a setting to fix.
    static func exit(for error: any Error, step: String, path: String, logger: Logger) -> ExitCode? {
        guard let fault = TransientFault(error) else { return nil }
        let location = fault.path ?? path
        logger.critical("\(step): a fault that may pass; exit 74, systemd starts the daemon again",
                        metadata: ["path": "\(location)", "error": "\(fault.reason)"])
        FileHandleOutput.standardError("stepsignd: \(step): \(location): \(fault.reason) (exit 74: a fault that may pass)\n")
        return ExitCode(exitStatus)
    }
}
