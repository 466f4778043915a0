import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import StreamCache

/// An ``OriginClient`` on AsyncHTTPClient: the fast client for servers and the command line.
///
/// Connections are pooled and reused; a redirect is handed back like any answer (the engine
/// follows it, checking the target); connect and read (idle) timeouts turn a silent origin into
/// a clean error instead of a hang.
public final class HTTPOriginClient: OriginClient {
    private let client: HTTPClient
    private let logger: Logger

    /// Creates a client with its own connection pool on the shared event loop group.
    ///
    /// - Parameters:
    ///   - connectTimeout: how long to wait for a TCP/TLS connection.
    ///   - readTimeout: how long the origin may stay silent while a response is expected.
    ///   - logger: where AsyncHTTPClient logs at trace level.
    public init(
        connectTimeout: Duration = .seconds(10),
        readTimeout: Duration = .seconds(30),
        logger: Logger = Logger(label: "StreamCache.HTTPOriginClient")
    ) {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: TimeAmount(connectTimeout), read: TimeAmount(readTimeout))
        configuration.decompression = .disabled
        configuration.httpVersion = .http1Only
        // The cache retries on its own terms; a refused connection should fail fast.
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 32
        // Kept for a player's next request, not for good: a burst of players leaves no sockets.
        configuration.connectionPool.idleTimeout = .seconds(15)
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.logger = logger
    }

    /// Closes all connections. Call once, when no fetch is running any more.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    public func fetch<Result: Sendable>(
        _ request: OriginRequest,
        _ handle: @Sendable (OriginResponseHead, OriginBody) async throws -> Result
    ) async throws -> Result {
        var httpRequest = HTTPClientRequest(url: request.url.absoluteString)
        httpRequest.method = .GET
        for field in request.allHeaders { httpRequest.headers.add(name: field.name, value: field.value) }

        let response: HTTPClientResponse
        do {
            response = try await client.execute(httpRequest, deadline: .distantFuture, logger: logger)
        } catch {
            throw Self.translate(error, url: request.url)
        }
        let head = OriginResponseHead(
            status: Int(response.status.code),
            headers: response.headers.map { HeaderField($0.name, $0.value) },
            url: response.url ?? request.url
        )
        let iterator = BodyIterator(response.body.makeAsyncIterator())
        let url = request.url
        let body = OriginBody {
            do {
                return try await iterator.next()
            } catch {
                throw Self.translate(error, url: url)
            }
        }
        return try await handle(head, body)
    }

    static func translate(_ error: Error, url: URL) -> Error {
        if error is CancellationError || error is StreamCacheError { return error }
        let host = url.host ?? url.absoluteString
        let hostAndPort = url.port.map { "\(host):\($0)" } ?? host
        if let error = error as? HTTPClientError {
            switch error {
            case .cancelled: return CancellationError()
            case .connectTimeout, .readTimeout, .writeTimeout, .tlsHandshakeTimeout, .deadlineExceeded:
                return StreamCacheError(.originTimeout, "origin \(host) timed out (\(error))")
            case .redirectLimitReached, .redirectCycleDetected:
                return StreamCacheError(.tooManyRedirects, "origin \(host): too many redirects")
            case .remoteConnectionClosed:
                return StreamCacheError(.originUnreachable, "origin \(host) closed the connection early")
            case .invalidURL, .emptyHost, .emptyScheme:
                return StreamCacheError(.invalidURL, "invalid origin URL \(url.absoluteString)")
            default:
                return StreamCacheError(.originUnreachable, "origin \(host): \(error)")
            }
        }
        if let error = error as? NIOConnectionError {
            let reason =
                error.connectionErrors.first.map { "\($0.error)" } ?? error.dnsAAAAError.map { "\($0)" }
                ?? "cannot connect"
            return StreamCacheError(.originUnreachable, "cannot connect to \(hostAndPort): \(reason)")
        }
        if let error = error as? IOError {
            return StreamCacheError(
                .originUnreachable,
                "cannot connect to \(hostAndPort): \(String(cString: strerror(error.errnoCode)))"
            )
        }
        if error is NIOCore.ChannelError || error is HTTPParserError {
            return StreamCacheError(.originUnreachable, "origin \(host): \(error)")
        }
        return StreamCacheError(.originUnreachable, "origin \(host): \(error)")
    }
}

/// Holds AsyncHTTPClient's body iterator so the body closure can pull from it.
///
/// Only the one task that reads the body uses it, one call at a time.
private final class BodyIterator: @unchecked Sendable {
    private var iterator: HTTPClientResponse.Body.AsyncIterator

    init(_ iterator: HTTPClientResponse.Body.AsyncIterator) {
        self.iterator = iterator
    }

    func next() async throws -> [UInt8]? {
        guard var buffer = try await iterator.next() else { return nil }
        return buffer.readBytes(length: buffer.readableBytes)
    }
}
