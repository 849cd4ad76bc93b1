/// The version of this source tree: one place for the daemon's `status`, every binary's
/// `--version` and the Debian package's version (scripts/package reads `stepsignd --version`).
public enum StepSignVersion {
    /// The release version, `MAJOR.MINOR.PATCH`.
    public static let current = "0.1.0"
}
