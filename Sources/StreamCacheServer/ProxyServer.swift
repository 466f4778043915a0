import Foundation
import Hummingbird
import Logging
import StreamCache

/// How the proxy listens and what it adds to origin requests.
public struct ProxyConfiguration: Sendable {
    /// The address to bind: loopback unless the user says otherwise.
    public var host = "127.0.0.1"
    /// The port; 0 picks a free one.
    public var port = 0
    /// Headers sent to origins (`--header`).
    public var originHeaders = OriginHeaders()

    public init() {}
}

/// The loopback caching proxy: any player streams `http://127.0.0.1:PORT/<origin URL>` through
/// the cache engine (DESIGN.md §6). Runs on Hummingbird until SIGINT or SIGTERM, then finishes
/// the responses in flight.
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
        let responder = ProxyResponder(
            engine: engine,
            authority: ListenerAuthority(boundHost: configuration.host),
            originHeaders: configuration.originHeaders,
            logs: logs
        )
        let host = configuration.host
        let application = Application(
            responder: responder,
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port),
                serverName: nil
            ),
            onServerRunning: { channel in
                await onListening(host, channel.localAddress?.port ?? 0)
            },
            logger: logger
        )
        try await application.runService(gracefulShutdownSignals: [.sigterm, .sigint])
    }
}
