import Foundation
import StepSignConfig

/// Where and how a ``PostgresStore`` connects (SPEC §6 `[storage.postgresql]`).
///
/// The settings are the configuration's own type (``settings``), defined once: a field read
/// here (`configuration.host`, `.port`, `.tls`, …) is that type's field, so the two cannot
/// drift apart, and every TLS mode reaches the store as itself. Only what the file does not
/// set (timeouts) is declared here.
///
/// Holds the path of the password file, never the password: the store reads the file when it
/// opens, so the password is in no configuration value, argument, environment or log.
@dynamicMemberLookup
public struct PostgresStoreConfiguration: Sendable, Equatable {
    /// TLS on a TCP connection (`tls`). `disable`: plain TCP; `require`: encrypted, the
    /// server's certificate not checked (libpq's `require`); `verify-full`: the certificate
    /// checked against `tlsCAFile` (or the system's roots) and the host name.
    public typealias TLSMode = StepSignConfiguration.Storage.PostgreSQL.TLS

    /// `[storage.postgresql]`: host (a name, an address, or the directory of the server's
    /// Unix socket when it starts with `/`), port, database, user, password file, TLS, pool size.
    public var settings: StepSignConfiguration.Storage.PostgreSQL
    /// How long one connection attempt may take.
    public var connectTimeout: Duration = .seconds(10)
    /// How long a call waits for a pooled connection before it fails as unavailable (while the
    /// server is down the pool would queue it for up to a minute).
    public var leaseTimeout: Duration = .seconds(5)
    /// How long a ledger batch whose `COMMIT` lost its connection keeps trying to find out
    /// whether it was committed before its outcome is reported as unknown.
    public var commitResolutionTimeout: Duration = .seconds(10)

    /// The store's settings from the daemon's `[storage.postgresql]`. `poolSize` overrides
    /// `pool_size` (a migration needs 2).
    public init(_ settings: StepSignConfiguration.Storage.PostgreSQL, poolSize: Int? = nil) {
        self.settings = settings
        if let poolSize { self.settings.poolSize = poolSize }
    }

    /// Settings given field by field (tests, tools); nil files mean none.
    public init(host: String, port: Int = 5432, database: String, user: String, passwordFile: String? = nil,
                tls: TLSMode = .disable, tlsCAFile: String? = nil, poolSize: Int = 8) {
        self.init(StepSignConfiguration.Storage.PostgreSQL(
            host: host, port: port, database: database, user: user, passwordFile: passwordFile ?? "",
            tls: tls, tlsCAFile: tlsCAFile ?? "", poolSize: poolSize))
    }

    /// A setting of ``settings``, read or changed in place.
    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<StepSignConfiguration.Storage.PostgreSQL, Value>) -> Value {
        get { settings[keyPath: keyPath] }
        set { settings[keyPath: keyPath] = newValue }
    }

    /// A value derived from ``settings`` (`usesUnixSocket`).
    public subscript<Value>(dynamicMember keyPath: KeyPath<StepSignConfiguration.Storage.PostgreSQL, Value>) -> Value {
        settings[keyPath: keyPath]
    }

    /// The file holding the password (its first line), or nil: no password (peer or trust
    /// authentication), or the systemd credential `stepsign-db-password` when
    /// `$CREDENTIALS_DIRECTORY` has one.
    public var passwordFile: String? { settings.passwordFile.isEmpty ? nil : settings.passwordFile }

    /// The CA certificates (PEM) for ``TLSMode/verifyFull``; nil: the system's roots.
    public var tlsCAFile: String? { settings.tlsCAFile.isEmpty ? nil : settings.tlsCAFile }

    /// The socket file for a Unix socket `host`: `<host>/.s.PGSQL.<port>`.
    public var unixSocketPath: String {
        (settings.host.hasSuffix("/") ? settings.host : settings.host + "/") + ".s.PGSQL.\(settings.port)"
    }

    /// The name of the systemd credential that may hold the password.
    public static let passwordCredentialName = "stepsign-db-password"

    /// Checks the values that do not need the server; throws ``PostgresStoreError/configuration(_:)``.
    public func validate() throws {
        guard !settings.host.isEmpty else { throw PostgresStoreError.configuration("host is empty") }
        guard (1...65535).contains(settings.port) else { throw PostgresStoreError.configuration("port \(settings.port) is not 1-65535") }
        guard !settings.database.isEmpty else { throw PostgresStoreError.configuration("database is empty") }
        guard !settings.user.isEmpty else { throw PostgresStoreError.configuration("user is empty") }
        guard (1...1000).contains(settings.poolSize) else {
            throw PostgresStoreError.configuration("pool_size \(settings.poolSize) is not 1-1000")
        }
        if settings.usesUnixSocket, settings.tls != .disable {
            throw PostgresStoreError.configuration("tls = \"\(settings.tls.rawValue)\" applies to TCP only; host is a Unix socket directory")
        }
        if settings.usesUnixSocket, unixSocketPath.utf8.count > 107 {
            throw PostgresStoreError.configuration("the socket path \(unixSocketPath) is longer than 107 bytes")
        }
    }

    /// The password: the first line of `passwordFile`; else the systemd credential
    /// `stepsign-db-password` if `$CREDENTIALS_DIRECTORY` holds one; else nil.
    func readPassword(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String? {
        let path: String
        if let passwordFile, !passwordFile.isEmpty {
            path = passwordFile
        } else if let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty,
                  FileManager.default.fileExists(atPath: directory + "/" + Self.passwordCredentialName) {
            path = directory + "/" + Self.passwordCredentialName
        } else {
            return nil
        }
        let contents: Data
        do {
            contents = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw PostgresStoreError.passwordFile(path: path, reason: "cannot be read")
        }
        guard let text = String(data: contents, encoding: .utf8) else {
            throw PostgresStoreError.passwordFile(path: path, reason: "is not UTF-8")
        }
        let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let password = line.hasSuffix("\r") ? String(line.dropLast()) : line
        guard !password.isEmpty else { throw PostgresStoreError.passwordFile(path: path, reason: "is empty") }
        return password
    }
}
