import Foundation
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The proxy's listening socket, as a service of the server's group: it accepts connections
/// and sets each one up (``ProxyPipeline``) on an event loop of the group (NIO hands them out in
/// turn), with nothing in between, so a request is read the moment it arrives.
///
/// On graceful shutdown it stops listening and asks every connection to close once its
/// responses are written; when the group's grace is over (the task is cancelled) it closes them
/// all. It returns once no connection is open and no answer runs (2 s at most), or at once
/// when the listener was closed by something else (the system, for an app in the background),
/// leaving the connections to end by themselves.
struct ProxyListener: Service {
    let host: String
    let port: Int
    let connections: OpenConnections
    /// Sets up a new connection's pipeline, on its event loop.
    let setUp: @Sendable (any Channel) throws -> Void
    let onListening: @Sendable (any Channel) async -> Void

    func run() async throws {
        let connections = connections
        let setUp = setUp
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            // Out of descriptors, the listener waits before it accepts again instead of spinning.
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AcceptPause())
                }
            }
            // No half-closed connections: a player that closes its side has gone (players never
            // half-close to read an answer), so the connection closes, which cancels its answer.
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: false)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try setUp(channel)
                    connections.add(channel)
                }
            }
            .bind(host: host, port: port)
            .get()
        await onListening(listener)
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                try? await listener.closeFuture.get()
            } onGracefulShutdown: {
                listener.close(promise: nil)
                connections.quiesce()
            }
            if connections.isStopping || Task.isCancelled { await connections.idle(within: .seconds(2)) }
        } onCancel: {
            listener.close(promise: nil)
            connections.closeAll()
        }
    }
}
