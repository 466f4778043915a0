import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import StreamCache
import StreamCacheOffline

/// The loopback server an app plays HLS streams and offline packages through: AVPlayer loads
/// media segments only over HTTP(S), never through a resource loader, and does not play an HLS
/// folder from a `file://` URL.
///
/// ```swift
/// let server = InAppServer(engine: engine)        // keep it for the app's lifetime
/// try await server.start()
/// let url = try await server.url(for: URL(string: "https://example.com/show/master.m3u8")!)
/// player.replaceCurrentItem(with: AVPlayerItem(url: url))
/// ```
///
/// It listens on `127.0.0.1` only, on a free port chosen at the first start and kept after, so
/// the URLs it gave stay valid when it comes back. Other apps on the device can reach a loopback
/// port: every path begins with an access key made at each launch, and a request without it gets
/// `403`.
///
/// iOS closes the listening sockets of a suspended app. The server comes back by itself when its
/// listener closes, and checks it when the app returns to the foreground
/// (`UIApplication.willEnterForegroundNotification`), or when the app calls ``resumeIfNeeded()``.
public actor InAppServer {
    /// The engine whose cache the server answers from.
    public nonisolated let engine: CacheEngine
    /// The key every path begins with: `http://127.0.0.1:PORT/<key>/<origin URL>`.
    public nonisolated let accessKey: String
    private let library: OfflineLibrary
    private let logger: Logger
    private var state = State.stopped
    private var foregroundObserver: (any NSObjectProtocol)?

    /// The port, once the server has started; kept across restarts.
    public private(set) var port: Int?

    private enum State {
        case stopped
        /// Started, not listening yet: another ``start()`` waits on `bound`.
        case starting(task: Task<Void, Never>, bound: Bound, services: ServiceGroup?)
        /// Listening (or its listener closed, and it listens again by itself).
        case running(task: Task<Void, Never>, listener: any Channel, services: ServiceGroup?)

        /// The serving task and its server's services, while there is one.
        var serving: (task: Task<Void, Never>, services: ServiceGroup?)? {
            switch self {
            case .stopped: nil
            case .starting(let task, _, let services), .running(let task, _, let services): (task, services)
            }
        }
    }

    /// How often the server tries to listen again after its listener closed, and how long it
    /// waits before each try (doubling from the first).
    static let restartAttempts = 8
    static let firstRestartDelay: Duration = .milliseconds(50)

    /// - Parameters:
    ///   - engine: the cache the server answers from.
    ///   - offlineLibrary: the library `/offline/<id>/…` is served from (default: the cache directory's).
    ///   - logger: failures only, at `notice`.
    /// The socket send buffer of each connection (``ProxyConfiguration/sendBufferSize``).
    public nonisolated let sendBufferSize: Int?

    public init(
        engine: CacheEngine,
        offlineLibrary: OfflineLibrary? = nil,
        logger: Logger? = nil,
        sendBufferSize: Int? = nil
    ) {
        self.engine = engine
        self.sendBufferSize = sendBufferSize
        self.library = offlineLibrary ?? OfflineLibrary(cache: engine.directory)
        self.logger = logger ?? Self.quietLogger()
        self.accessKey = Self.makeAccessKey()
    }

    /// Starts listening on `127.0.0.1`; nothing happens if the server is running.
    ///
    /// - Returns: the port.
    /// - Throws: if no port can be bound (the port of an earlier start is taken by another process).
    @discardableResult
    public func start() async throws -> Int {
        switch state {
        case .starting(_, let bound, _):
            return try await bound.wait().localAddress?.port ?? 0
        case .running(let task, let listener, let services):
            if listener.isActive, let port { return port }
            // A server that gave up listening again: ended before it listens anew.
            state = .stopped
            await Self.end(task, services)
        case .stopped:
            break
        }
        observeForeground()
        return try await listen()
    }

    /// Stops listening and cuts the responses in flight. URLs given before stay valid for the
    /// next ``start()`` of this server.
    public func stop() async {
        guard let (task, services) = state.serving else { return }
        state = .stopped
        await Self.end(task, services)
        if let foregroundObserver { NotificationCenter.default.removeObserver(foregroundObserver) }
        foregroundObserver = nil
    }

    /// The URL to give the player for an origin URL (a playlist, or any resource).
    ///
    /// - Throws: ``StreamCacheError`` `.unsupportedScheme` for a URL that is not http(s),
    ///   `.invalidURL` for one without a host (``CacheEngine/validate(_:)``);
    ///   ``InAppServerNotStarted`` if the server has never started.
    public func url(for origin: URL) throws -> URL {
        try CacheEngine.validate(origin)
        return try url(path: "/" + origin.absoluteString)
    }

    /// The URL to give the player for the offline package `id` of the server's library; it plays
    /// with the origin gone once the package is complete, and while it downloads from the cache.
    ///
    /// - Throws: ``InAppServerNotStarted`` if the server has never started.
    public func url(forOfflinePackage id: String) throws -> URL {
        try url(path: OfflineFiles.prefix + id + "/master.m3u8")
    }

    /// Checks that the listener still answers and listens again if it does not: call it when the
    /// app returns to the foreground (the server does so itself on
    /// `UIApplication.willEnterForegroundNotification`).
    public func resumeIfNeeded() async {
        guard case .running(let task, _, let services) = state, let port else { return }
        guard await !Self.answers(port: port) else { return }
        state = .stopped
        await Self.end(task, services)
        do {
            _ = try await listen()
        } catch {
            logger.notice("the in-app server could not listen again on port \(port): \(error)")
        }
    }

    // MARK: Listening

    private func url(path: String) throws -> URL {
        guard let port, let url = URL(string: "http://127.0.0.1:\(port)/\(accessKey)" + path) else {
            throw InAppServerNotStarted()
        }
        return url
    }

    /// Ends the serving task: a graceful shutdown of its server (responses in flight get the
    /// server's grace period), then the task.
    private static func end(_ task: Task<Void, Never>, _ services: ServiceGroup?) async {
        await services?.triggerGracefulShutdown()
        task.cancel()
        await task.value
    }

    /// Starts the serving task and waits until it listens or fails to.
    private func listen() async throws -> Int {
        let bound = Bound()
        let task = Task { await self.serve(bound) }
        state = .starting(task: task, bound: bound, services: nil)
        do {
            return try await bound.wait().localAddress?.port ?? 0
        } catch {
            if case .starting(let current, _, _) = state, current == task { state = .stopped }
            task.cancel()
            throw error
        }
    }

    /// Runs the server until the task is cancelled; when the listener closes without that (iOS
    /// closed it), listens again on the same port, trying at most ``restartAttempts`` times in a
    /// row, with a doubling delay.
    private func serve(_ first: Bound) async {
        var bound = first
        var failures = 0
        while !Task.isCancelled {
            do {
                let server = try makeServer()
                try await server.run(shutdownSignals: [], willRun: { await self.running($0) }) { [bound] _, channel in
                    await self.listening(on: channel)
                    bound.resume(channel)
                }
            } catch {
                bound.fail(error)
                if !bound.hasResumed, !Task.isCancelled { logger.notice("the in-app server stopped: \(error)") }
            }
            // A first start that could not listen is reported by start(); a stop ends the loop.
            guard !Task.isCancelled, first.hasResumed else { return }
            failures = bound.hasResumed ? 1 : failures + 1
            guard failures <= Self.restartAttempts else {
                logger.notice("the in-app server gave up listening again after \(Self.restartAttempts) tries")
                return
            }
            try? await Task.sleep(for: Self.firstRestartDelay * (1 << (failures - 1)))
            bound = Bound()
        }
    }

    private func makeServer() throws -> ProxyServer {
        var configuration = ProxyConfiguration()
        configuration.port = port ?? 0
        configuration.accessKey = accessKey
        configuration.offlineLibrary = library
        configuration.shutdownGracePeriod = .milliseconds(100)
        configuration.sendBufferSize = sendBufferSize
        let logs = try ProxyLogs(accessLogPath: nil, errorLogPath: nil, logger: logger)
        return ProxyServer(engine: engine, configuration: configuration, logs: logs, logger: logger)
    }

    private func running(_ services: ServiceGroup) {
        switch state {
        case .starting(let task, let bound, _): state = .starting(task: task, bound: bound, services: services)
        case .running(let task, let listener, _): state = .running(task: task, listener: listener, services: services)
        case .stopped: break
        }
    }

    private func listening(on channel: any Channel) {
        guard let (task, services) = state.serving else { return }
        state = .running(task: task, listener: channel, services: services)
        port = channel.localAddress?.port ?? port
    }

    private func observeForeground() {
        guard foregroundObserver == nil else { return }
        // UIKit's name, spelled out: the server needs no UIKit, and gets the notification where it exists.
        let name = Notification.Name("UIApplicationWillEnterForegroundNotification")
        foregroundObserver = NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) {
            [weak self] _ in
            guard let self else { return }
            Task { await self.resumeIfNeeded() }
        }
    }

    /// Whether something accepts connections on `127.0.0.1:port` (the listener, if it lives).
    private static func answers(port: Int) async -> Bool {
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(1))
        guard let channel = try? await bootstrap.connect(host: "127.0.0.1", port: port).get() else { return false }
        try? await channel.close()
        return true
    }

    /// Failures only: the server's starts and stops are an app's routine.
    private static func quietLogger() -> Logger {
        var logger = Logger(label: "StreamCache.InAppServer")
        logger.logLevel = .notice
        return logger
    }

    /// 32 hexadecimal digits from the system's random source.
    private static func makeAccessKey() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let value = generator.next() as UInt64
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
    }

    // MARK: For tests

    /// Closes the listener as iOS does for a suspended app; the server listens again by itself.
    func closeListenerAsTheSystemWould() async {
        guard case .running(_, let listener, _) = state else { return }
        try? await listener.close()
    }
}

/// A URL of the in-app server was asked for before its first ``InAppServer/start()``.
public struct InAppServerNotStarted: Error, CustomStringConvertible {
    public var description: String { "the in-app server has not started: call start() first" }
}

/// The first listener of a serving task, or why it could not listen, handed to ``InAppServer/start()``.
private final class Bound: Sendable {
    private struct State {
        var result: Result<any Channel, any Error>?
        var waiters: [CheckedContinuation<any Channel, any Error>] = []
        var resumed = false
    }

    private let state = Locked(State())

    var hasResumed: Bool { state.value.resumed }

    func resume(_ channel: any Channel) { settle(.success(channel)) }

    func fail(_ error: any Error) { settle(.failure(error)) }

    func wait() async throws -> any Channel {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<any Channel, any Error>? = state.withLock { state in
                if let result = state.result { return result }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// The first result only: later listeners (after a restart) are not waited for.
    private func settle(_ outcome: Result<any Channel, any Error>) {
        let waiting: [CheckedContinuation<any Channel, any Error>] = state.withLock { state in
            guard state.result == nil else { return [] }
            state.result = outcome
            if case .success = outcome { state.resumed = true }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiting { waiter.resume(with: outcome) }
    }
}
