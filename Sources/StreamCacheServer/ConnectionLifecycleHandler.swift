import NIOCore
import NIOHTTP1

/// Closes proxy connections as ``ConnectionLifecycle`` decides: idle ones after the idle
/// timeout, and all of them on graceful shutdown (`ChannelShouldQuiesceEvent`) once their
/// responses are written. It sees every request and response of the connection: the responder's
/// parts, and each response ``WarmRangeHandler`` writes encoded as an ``EncodedResponseWritten``.
final class ConnectionLifecycleHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private var lifecycle: ConnectionLifecycle
    private var check: Scheduled<Void>?

    init(idleTimeout: Duration) {
        lifecycle = ConnectionLifecycle(idleTimeout: .nanoseconds(Int64(idleTimeout / .nanoseconds(1))), now: .now())
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { act(lifecycle.firstCheck, context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if check == nil { act(lifecycle.firstCheck, context: context) }
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lifecycle.read(unwrapInboundIn(data), now: .now())
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard lifecycle.writing(unwrapOutboundIn(data), now: .now()) == .close else {
            context.write(data, promise: promise)
            return
        }
        // Closed once this last part has gone out: closing with writes pending would cut them.
        let written = promise ?? context.eventLoop.makePromise()
        context.writeAndFlush(data, promise: written)
        written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let response = event as? EncodedResponseWritten else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        promise?.succeed(())
        let action =
            response.requestWasRead ? lifecycle.responseEnded(now: .now()) : lifecycle.answeredUnread(now: .now())
        guard action == .close else { return }
        response.written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        act(lifecycle.quiesce(), context: context)
    }

    private func act(_ action: ConnectionLifecycle.Action, context: ChannelHandlerContext) {
        switch action {
        case .none:
            break
        case .close:
            check?.cancel()
            check = nil
            context.close(promise: nil)
        case .checkAt(let deadline):
            check?.cancel()
            check = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
                check = nil
                act(lifecycle.check(now: .now()), context: context)
            }
        }
    }
}
