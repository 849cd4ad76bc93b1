import AsyncHTTPClient
import NIOCore
import StepSignSystem

/// Where a published log (C2SP tlog-tiles) is read from: a directory (`ledger.tiles_dir`, or a
/// copy of it) or a URL prefix a web server publishes it under.
public protocol TileSource: Sendable {
    /// The bytes of `path` under the log's prefix (`checkpoint`, `tile/0/000`, …), at most
    /// `limit` of them; nil if there is no such resource.
    func read(_ path: String, limit: Int) async throws -> [UInt8]?
    /// Where the log is, for messages.
    var location: String { get }
}

/// Why a published resource could not be read.
public struct TileSourceError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A published log in a directory.
public struct DirectoryTileSource: TileSource {
    public let path: String
    public var location: String { path }

    public init(path: String) {
        self.path = path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path
    }

    public func read(_ resource: String, limit: Int) async throws -> [UInt8]? {
        let file = path + "/" + resource
        let bytes: [UInt8]
        do { bytes = try SecureFile.read(file) } catch {
            if error.errno == 2 { return nil }  // ENOENT
            throw TileSourceError("\(error)")
        }
        guard bytes.count <= limit else { throw TileSourceError("\(file) is larger than \(limit) bytes") }
        return bytes
    }
}

/// A published log under an `http://` or `https://` prefix (AsyncHTTPClient; redirects not
/// followed, a timeout per request, bodies bounded).
public final class HTTPTileSource: TileSource {
    public let prefix: String
    public var location: String { prefix }
    private let client: HTTPClient
    private let timeout: TimeAmount

    public init(prefix: String, timeout: TimeAmount = .seconds(30)) {
        self.prefix = prefix.hasSuffix("/") ? String(prefix.dropLast()) : prefix
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout = .init(connect: .seconds(10), read: timeout)
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.timeout = timeout
    }

    /// Closes the client's connections; call once done.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    public func read(_ path: String, limit: Int) async throws -> [UInt8]? {
        let url = prefix + "/" + path
        let response: HTTPClientResponse
        do {
            response = try await client.execute(HTTPClientRequest(url: url), timeout: timeout)
        } catch {
            throw TileSourceError("GET \(url): \(error)")
        }
        if response.status.code == 404 { return nil }
        guard response.status.code == 200 else { throw TileSourceError("GET \(url): HTTP \(response.status.code)") }
        do {
            return Array(buffer: try await response.body.collect(upTo: limit))
        } catch {
            throw TileSourceError("GET \(url): the body is larger than \(limit) bytes, or broke off: \(error)")
        }
    }
}
