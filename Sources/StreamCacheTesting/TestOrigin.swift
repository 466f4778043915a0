import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import StreamCache

/// A real HTTP/1.1 origin on `127.0.0.1` for tests and benchmarks: correct `Range` handling,
/// `ETag`/`Last-Modified`, conditional requests, plus a bandwidth cap, added latency and faults.
///
/// It counts the body bytes it sends per request and per path (``statistics``), so a test can
/// check that the cache fetched each byte once. `GET /_origin/stats` returns them as JSON, once
/// no request is being answered (a quarter second at most).
public final class TestOrigin: Sendable {
    private let content: OriginContent
    private let state: OriginState
    private let recorder = StatisticsRecorder()
    private let serverChannel: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>
    private let acceptTask: Task<Void, Never>

    /// The port the origin listens on.
    public let port: Int

    /// Starts an origin serving the files under `directory` (if any) and in-memory resources set
    /// with ``setResource(_:at:)``.
    ///
    /// - Parameters:
    ///   - directory: a folder whose files are served at their relative paths.
    ///   - host: the address to bind (loopback by default).
    ///   - port: the port, `0` for any free one.
    ///   - conditions: bandwidth, latency and faults.
    ///   - live: serves the directory's VOD media playlists as live streams.
    public init(
        directory: String? = nil,
        host: String = "127.0.0.1",
        port: Int = 0,
        conditions: OriginConditions = OriginConditions(),
        live: LiveSchedule? = nil
    ) async throws {
        let content = OriginContent(directory: directory, live: live)
        let state = OriginState(conditions)
        let recorder = recorder
        self.content = content
        self.state = state
        serverChannel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .bind(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    // Finishing the writer shuts the write side once every byte is sent (a
                    // connection that is not kept alive ends so, not cut by a close).
                    return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(
                        wrappingChannelSynchronously: channel,
                        configuration: .init(isOutboundHalfClosureEnabled: true)
                    )
                }
            }
        self.port = serverChannel.channel.localAddress?.port ?? port
        let server = serverChannel
        acceptTask = Task {
            try? await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { inbound in
                    for try await connection in inbound {
                        group.addTask {
                            await OriginConnection(
                                connection: connection,
                                content: content,
                                state: state,
                                recorder: recorder
                            ).run()
                        }
                    }
                }
            }
        }
    }

    /// `http://127.0.0.1:PORT`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// The URL of `path` on this origin (`path` starts with `/`).
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Serves `bytes` at `path`; calling it again replaces the content and its ETag.
    public func setResource(_ bytes: [UInt8], at path: String) {
        content.set(bytes, at: path)
    }

    /// Makes `path` redirect to `location` (absolute or relative) with `status`.
    public func setRedirect(_ path: String, to location: String, status: Int = 302) {
        content.setRedirect(path, to: location, status: status)
    }

    /// Changes how the origin behaves from the next request on.
    public func setConditions(_ conditions: OriginConditions) {
        state.conditions = conditions
    }

    /// What the origin has sent so far.
    public var statistics: OriginStatistics { recorder.snapshot }

    /// Forgets what the origin has sent so far.
    public func resetStatistics() { recorder.reset() }

    /// Stops listening and closes every connection.
    public func shutdown() async {
        try? await serverChannel.channel.close()
        acceptTask.cancel()
        await acceptTask.value
    }
}

/// The origin's mutable settings.
final class OriginState: Sendable {
    private let current: Locked<OriginConditions>
    private let etagCounter = Locked(0)
    private let requestsPerPath = Locked<[String: Int]>([:])

    init(_ conditions: OriginConditions) { current = Locked(conditions) }

    var conditions: OriginConditions {
        get { current.value }
        set { current.withLock { $0 = newValue } }
    }

    /// Counts a request for `path`; returns how many there have been, this one included.
    func countRequest(_ path: String) -> Int {
        requestsPerPath.withLock { counts in
            counts[path, default: 0] += 1
            return counts[path]!
        }
    }

    func nextETagSuffix() -> Int {
        etagCounter.withLock { counter in
            counter += 1
            return counter
        }
    }
}
