import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import StreamCache
import StreamCacheOffline
import UnixSignals

/// How the proxy listens and what it adds to origin requests.
public struct ProxyConfiguration: Sendable {
    /// The address to bind: loopback unless the user says otherwise.
    public var host = "127.0.0.1"
    /// The port; 0 picks a free one.
    public var port = 0
    /// Headers sent to origins (`--header`).
    public var originHeaders = OriginHeaders()
    /// Web origins allowed to use the proxy (`--allow-origin`); requests from other web pages get `403`.
    public var allowedOrigins: [String] = []
    /// How long a connection may stay without a complete request (idle keep-alive, a partial
    /// request line or partial headers) before it is closed.
    public var idleTimeout: Duration = .seconds(30)
    /// How long responses in flight may go on after SIGINT or SIGTERM before they are cut: long
    /// enough for a cached segment or playlist to finish, short enough that Ctrl-C feels
    /// immediate although a player always has a response open.
    public var shutdownGracePeriod: Duration = .milliseconds(250)
    /// The offline library `/offline/<id>/…` is served from (default: the cache directory's).
    public var offlineLibrary: OfflineLibrary?
    /// When set, every path must begin with `/<accessKey>` (`/<key>/https://…`); others get `403`.
    /// Other apps on a device can reach a loopback port: ``InAppServer`` sets a new key at each launch.
    public var accessKey: String?
    /// The client low-latency HLS blocking reloads go through (``BlockingReload``), with
    /// connections of its own so that held reloads never take the ones segments need; `nil`:
    /// the engine's.
    public var reloadOrigin: (any OriginClient)?
    /// The socket send buffer of each connection (`SO_SNDBUF`); `nil`: the system's, which grows
    /// as a fast client reads. A client that reads a little and seeks away (ffmpeg cutting a
    /// section) gets a small one, so the cache reads only a little ahead of it.
    public var sendBufferSize: Int?

    public init() {}
}

/// The loopback caching proxy: any player streams `http://127.0.0.1:PORT/<origin URL>` through
/// the cache engine (`docs/proxy.md`). Runs on SwiftNIO (``ProxyListener``, ``ProxyPipeline``):
/// a connection's state machine (``ProxyConnection``) answers cache hits on the event loops
/// and everything else by the responder in a task per request, until SIGINT or SIGTERM, then it
/// finishes the responses in flight for at most ``ProxyConfiguration/shutdownGracePeriod``.
public struct ProxyServer: Sendable {
    let engine: CacheEngine
    let configuration: ProxyConfiguration
    let logs: ProxyLogs
    let logger: Logger

    public init(engine: CacheEngine, configuration: ProxyConfiguration, logs: ProxyLogs, logger: Logger) {
        self.engine = engine
        self.configuration = configuration
        self.logs = logs
        self.logger = logger
    }

    /// Serves until SIGINT or SIGTERM.
    ///
    /// - Parameter onListening: called once the listener is bound, with its host and port.
    /// - Throws: if the address cannot be bound.
    public func run(onListening: @escaping @Sendable (String, Int) async -> Void) async throws {
        try await run(shutdownSignals: [.sigterm, .sigint]) { host, channel in
            await onListening(host, channel.localAddress?.port ?? 0)
        }
    }

    /// Serves until one of `shutdownSignals`, a graceful shutdown of its service group, the
    /// task's cancellation or the listener's close.
    ///
    /// - Parameters:
    ///   - willRun: called with the service group before it runs, to shut it down gracefully.
    ///   - onListening: called once the listener is bound, with its host and channel.
    func run(
        shutdownSignals: [UnixSignal],
        willRun: @Sendable (ServiceGroup) async -> Void = { _ in },
        onListening: @escaping @Sendable (String, any Channel) async -> Void
    ) async throws {
        // Cache hits are answered without opening a session; the chores (access times among them)
        // must run all the same.
        await engine.startChores()
        let authority = ListenerAuthority(boundHost: configuration.host)
        let webPages = WebPagePolicy(allowedOrigins: configuration.allowedOrigins)
        let hits = CacheHits(engine: engine, originHeaders: configuration.originHeaders)
        let accessKey = configuration.accessKey
        let library = configuration.offlineLibrary ?? OfflineLibrary(cache: engine.directory)
        let prefetches = PrefetchRequests(engine: engine, library: library, originHeaders: configuration.originHeaders)
        defer { prefetches.cancel() }
        let responder = ProxyResponder(
            engine: engine,
            originHeaders: configuration.originHeaders,
            logs: logs,
            offline: OfflineFiles(library: library, engine: engine),
            pathPrefix: accessKey.map { "/" + $0 } ?? "",
            reloadOrigin: configuration.reloadOrigin,
            prefetches: prefetches
        )
        let idleTimeout = configuration.idleTimeout
        let connections = OpenConnections()
        let host = configuration.host
        let sendBufferSize = configuration.sendBufferSize
        let listener = ProxyListener(
            host: host,
            port: configuration.port,
            connections: connections,
            setUp: { [logs] channel in
                if let sendBufferSize {
                    try channel.syncOptions?.setOption(ChannelOptions.socketOption(.so_sndbuf), value: sendBufferSize)
                }
                let connection = ProxyConnectionHandler(
                    idleTimeout: idleTimeout,
                    admission: RequestAdmission(
                        authority: authority,
                        webPages: webPages,
                        accessKey: accessKey,
                        local: channel.localAddress
                    ),
                    hits: hits,
                    logs: logs,
                    connections: connections
                ) { request, verdict, body, context in
                    await responder.respond(to: request, verdict: verdict, body: body, context: context)
                }
                try ProxyPipeline.setUp(channel, connection: connection)
            },
            onListening: { channel in await onListening(host, channel) }
        )
        var group = ServiceGroupConfiguration(
            services: [.init(service: listener)],
            gracefulShutdownSignals: shutdownSignals,
            logger: logger
        )
        // Responses that outlast the grace period (a slow origin, a stalled client) are cut.
        group.maximumGracefulShutdownDuration = configuration.shutdownGracePeriod
        // The entries of responses answered on the event loops are written beside the server,
        // and to the last once it has stopped.
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { [logs] in await logs.writePosted() }
            defer { logs.finishPosting() }
            let services = ServiceGroup(configuration: group)
            await willRun(services)
            try await services.run()
        }
    }
}
