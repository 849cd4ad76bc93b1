import Foundation
import StepSignConfig

/// Where and how a ``PostgresStore`` connects (SPEC §6 `[storage.postgresql]`).
///
/// Holds the path of the password file, never the password: the store reads the file when it
/// opens, so the password is in no configuration value, argument, environment or log.
public struct PostgresStoreConfiguration: Sendable, Equatable {
    /// TLS on a TCP connection: the configuration's own type (`tls`), so that the two cannot
    /// drift apart. `disable`: plain TCP; `require`: encrypted, the server's certificate not
    /// checked (libpq's `require`); `verify-full`: the certificate checked against `tlsCAFile`
    /// (or the system's roots) and the host name.
    public typealias TLSMode = StepSignConfiguration.Storage.PostgreSQL.TLS

    /// A host name or IP address, or (starting with `/`) the directory of the server's Unix socket.
    public var host: String
    /// The TCP port, or the number in the socket's name (`.s.PGSQL.<port>`).
    public var port: Int
    /// The database name.
    public var database: String
    /// The role the daemon logs in as.
    public var user: String
    /// The file holding the password (its first line), or nil: no password (peer or trust
    /// authentication), or the systemd credential `stepsign-db-password` when
    /// `$CREDENTIALS_DIRECTORY` has one.
    public var passwordFile: String?
    /// TLS for TCP; must be ``TLSMode/disable`` on a Unix socket.
    public var tls: TLSMode
    /// The CA certificates (PEM) for ``TLSMode/verifyFull``; nil: the system's roots.
    public var tlsCAFile: String?
    /// The most connections the store keeps open.
    public var poolSize: Int
    /// How long one connection attempt may take.
    public var connectTimeout: Duration
    /// How long a call waits for a pooled connection before it fails as unavailable (while the
    /// server is down the pool would queue it for up to a minute).
    public var leaseTimeout: Duration = .seconds(5)
    /// How long a ledger batch whose `COMMIT` lost its connection keeps trying to find out
    /// whether it was committed before its outcome is reported as unknown.
    public var commitResolutionTimeout: Duration = .seconds(10)

    public init(host: String, port: Int = 5432, database: String, user: String, passwordFile: String? = nil,
                tls: TLSMode = .disable, tlsCAFile: String? = nil, poolSize: Int = 8,
                connectTimeout: Duration = .seconds(10)) {
        self.host = host
        self.port = port
        self.database = database
        self.user = user
        self.passwordFile = passwordFile
        self.tls = tls
        self.tlsCAFile = tlsCAFile
        self.poolSize = poolSize
        self.connectTimeout = connectTimeout
    }

    /// The store's settings from the daemon's `[storage.postgresql]`: the one place they are
    /// carried over (every field; "" for a file means none). `poolSize` overrides `pool_size`
    /// (a migration needs 2).
    public init(_ settings: StepSignConfiguration.Storage.PostgreSQL, poolSize: Int? = nil) {
        self.init(host: settings.host, port: settings.port, database: settings.database, user: settings.user,
                  passwordFile: settings.passwordFile.isEmpty ? nil : settings.passwordFile,
                  tls: settings.tls, tlsCAFile: settings.tlsCAFile.isEmpty ? nil : settings.tlsCAFile,
                  poolSize: poolSize ?? settings.poolSize)
    }

    /// Whether `host` names a Unix socket directory.
    public var usesUnixSocket: Bool { host.hasPrefix("/") }

    /// The socket file for a Unix socket `host`: `<host>/.s.PGSQL.<port>`.
    public var unixSocketPath: String {
        (host.hasSuffix("/") ? host : host + "/") + ".s.PGSQL.\(port)"
    }

    /// The name of the systemd credential that may hold the password.
    public static let passwordCredentialName = "stepsign-db-password"

    /// Checks the values that do not need the server; throws ``PostgresStoreError/configuration(_:)``.
    public func validate() throws {
        guard !host.isEmpty else { throw PostgresStoreError.configuration("host is empty") }
        guard (1...65535).contains(port) else { throw PostgresStoreError.configuration("port \(port) is not 1-65535") }
        guard !database.isEmpty else { throw PostgresStoreError.configuration("database is empty") }
        guard !user.isEmpty else { throw PostgresStoreError.configuration("user is empty") }
        guard (1...1000).contains(poolSize) else {
            throw PostgresStoreError.configuration("pool_size \(poolSize) is not 1-1000")
        }
        if usesUnixSocket, tls != .disable {
            throw PostgresStoreError.configuration("tls = \"\(tls.rawValue)\" applies to TCP only; host is a Unix socket directory")
        }
        if usesUnixSocket, unixSocketPath.utf8.count > 107 {
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
