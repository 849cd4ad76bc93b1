/// A list of common passwords, compared ignoring case.
///
/// `builtIn` (in the module `StepSignCommonPasswords`, so that only the binaries that check
/// passwords link it) is Django's list of 20,000 common passwords by Royce Williams
/// (BSD-3-Clause; see docs/common-passwords.md). `init(contentsOf:)` reads the
/// file named by `password.common_passwords_file`, which then replaces the built-in list:
/// UTF-8, one password per line, `\n` or `\r\n` line ends, empty lines ignored. There are
/// no comment lines: real lists (Django's included) hold passwords that start with `#`.
public struct CommonPasswords: Sendable {
    private let entries: Set<String>

    /// Builds a list from `passwords`, compared ignoring case.
    public init(_ passwords: some Sequence<String>) {
        entries = Set(passwords.lazy.filter { !$0.isEmpty }.map { $0.lowercased() })
    }

    /// Parses a list in the file format described above.
    public init(parsing text: String) {
        self.init(text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline).map(String.init))
    }

    /// Reads a list file; the error names `path` and the key `password.common_passwords_file`.
    public init(contentsOf path: String) throws(ConfigError) {
        self.init(parsing: try ConfigFile.read(path, key: "password.common_passwords_file"))
    }

    /// How many distinct passwords the list holds.
    public var count: Int { entries.count }

    /// Whether `password` is on the list, ignoring case.
    public func contains(_ password: String) -> Bool {
        entries.contains(password.lowercased())
    }
}
