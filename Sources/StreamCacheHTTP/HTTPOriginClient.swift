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
/// a clean error instead of a hang. A body is received on the event loop into a bounded
/// ``ResponseQueue`` and handed over in runs of what has arrived.
public final class HTTPOriginClient: OriginClient {
    private let client: HTTPClient
    private let logger: Logger
    /// What the bodies being received may hold between them beyond their minimums (see
    /// ``ResponseQueue``): two fast fetches get their whole queue, which a cold relay needs to
    /// keep its CPU down, and hundreds at once share it instead of holding 1 MiB apiece
    /// (`bench/players.sh` measures both).
    private let queueBudget = QueueBudget(bytes: 2 << 20)
    /// The event loop every origin connection of the process runs on, apart from the loops of
    /// NIO's shared group that the proxy's player connections run on. On the shared group a
    /// relay's origin connection could land on its player's loop, and one thread then received
    /// the body and sent it on while the other stayed idle (`bench/HISTORY.md` has the runs). One thread receives far more than a network delivers;
    /// it never shuts down, as the shared group does not.
    private static let originLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    /// Creates a client with its own connection pool on the shared event loop group.
    ///
    /// - Parameters:
    ///   - connectTimeout: how long to wait for a TCP/TLS connection.
    ///   - readTimeout: how long the origin may stay silent while a response is expected.
    ///   - logger: where AsyncHTTPClient logs at debug and trace level.
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
        client = HTTPClient(eventLoopGroupProvider: .shared(Self.originLoop), configuration: configuration)
        // AsyncHTTPClient logs at debug and trace only, but sets its request's metadata on the
        // logger for every request, which a `StreamLogHandler` renders at once: CPU spent on every
        // small file `serve` fills, for lines never shown (`bench/HISTORY.md`). A logger that shows neither level
        // gets a handler that keeps nothing.
        self.logger =
            logger.logLevel <= .debug
            ? logger : Logger(label: logger.label, factory: { _ in SwiftLogNoOpLogHandler() })
    }

    /// Closes all connections. Call once, when no fetch is running any more.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    /// A client dropped without ``shutdown()`` (its owner failed first) closes its connections
    /// on its own instead of leaking them; AsyncHTTPClient stops a debug build when a client is
    /// dropped open. After ``shutdown()`` this does nothing.
    deinit {
        let client = client
        client.shutdown().whenComplete { _ in withExtendedLifetime(client) {} }
    }

    public func fetch<Result: Sendable>(
        _ request: OriginRequest,
        _ handle: @Sendable (OriginResponseHead, OriginBody) async throws -> Result
    ) async throws -> Result {
        var headers = HTTPHeaders()
        for field in request.allHeaders { headers.add(name: field.name, value: field.value) }
        let url = request.url
        let httpRequest: HTTPClient.Request
        do {
            httpRequest = try HTTPClient.Request(
                url: url,
                method: HTTPMethod(rawValue: request.method),
                headers: headers,
                body: request.body.map { .bytes($0) }
            )
        } catch {
            throw Self.translate(error, url: url)
        }
        let queue = ResponseQueue(budget: queueBudget)
        let task = client.execute(request: httpRequest, delegate: queue, logger: logger)
        return try await withTaskCancellationHandler {
            // However `handle` ends, the transfer ends with it (a no-op once the body is done).
            defer { task.cancel() }
            let responseHead: HTTPResponseHead
            do {
                responseHead = try await queue.responseHead()
            } catch {
                throw Self.translate(error, url: url)
            }
            let head = OriginResponseHead(
                status: Int(responseHead.status.code),
                headers: responseHead.headers.map { HeaderField($0.name, $0.value) },
                url: url
            )
            let body = OriginBody {
                do {
                    return try await queue.nextRun()
                } catch {
                    throw Self.translate(error, url: url)
                }
            }
            return try await handle(head, body)
        } onCancel: {
            task.cancel()
        }
    }

    static func translate(_ error: Error, url: URL) -> Error {
        if error is CancellationError || error is StreamCacheError { return error }
        let host = url.originName
        if let error = error as? HTTPClientError {
            switch error {
            case .cancelled: return CancellationError()
            case .connectTimeout, .tlsHandshakeTimeout:
                return StreamCacheError(.originTimeout, "origin \(host) did not accept a connection in time")
            case .readTimeout:
                return StreamCacheError(.originTimeout, "origin \(host) sent nothing for too long (read timed out)")
            case .writeTimeout, .deadlineExceeded:
                return StreamCacheError(.originTimeout, "origin \(host) timed out")
            case .redirectLimitReached, .redirectCycleDetected:
                return StreamCacheError(.tooManyRedirects, "origin \(host): too many redirects")
            case .remoteConnectionClosed:
                return StreamCacheError(.originUnreachable, "origin \(host) closed the connection early")
            case .invalidURL, .emptyHost, .emptyScheme:
                return StreamCacheError(.invalidURL, "invalid origin URL \(url.absoluteString)")
            default:
                // Its description of a refused field holds the field's value, which may be a credential.
                if "\(error)".contains("invalidHeaderField") {
                    return StreamCacheError(
                        .invalidURL,
                        "origin \(host): a request field holds a character HTTP does not allow"
                    )
                }
                return StreamCacheError(.originUnreachable, "origin \(host): \(error)")
            }
        }
        if let error = error as? NIOConnectionError {
            guard let failure = error.connectionErrors.first?.error else {
                // No address to connect to: the name did not resolve.
                var unresolved = StreamCacheError(.originUnreachable, "cannot resolve host \(url.host ?? host)")
                unresolved.cause = .hostNotFound
                return unresolved
            }
            // The first address's failure says why, as an IOError does (refused, no route).
            if failure is IOError { return translate(failure, url: url) }
            var unreachable = StreamCacheError(.originUnreachable, "cannot connect to \(host): \(failure)")
            unreachable.cause = .cannotConnect
            return unreachable
        }
        if let error = error as? IOError {
            let refused = error.errnoCode == ECONNREFUSED
            var unreachable = StreamCacheError(
                .originUnreachable,
                "cannot connect to \(host): "
                    + (refused ? "connection refused" : String(cString: strerror(error.errnoCode)))
            )
            unreachable.cause = refused ? .connectionRefused : .cannotConnect
            return unreachable
        }
        if error is NIOCore.ChannelError || error is HTTPParserError {
            return StreamCacheError(.originUnreachable, "origin \(host): \(error)")
        }
        return StreamCacheError(.originUnreachable, "origin \(host): \(error)")
    }
}
