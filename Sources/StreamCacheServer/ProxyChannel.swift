import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// The proxy's HTTP/1.1 connections: Hummingbird's responder behind two handlers of the
/// proxy's own. ``WarmRangeHandler`` answers the ranges a warm resource holds on the event loop;
/// ``ConnectionLifecycleHandler`` closes idle connections after the idle timeout and all of
/// them on graceful shutdown once their responses are written. An HTTP/1.0 client without
/// keep-alive gets the close it expects.
struct ProxyChannel: HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    let responder: HTTPChannelHandler.Responder
    let idleTimeout: Duration
    let warm: WarmRequests
    let logs: ProxyLogs
    let accessKey: String?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.configureHTTPServerPipeline(
                withPipeliningAssistance: false,  // requests are taken one at a time by the async channel
                withErrorHandling: false,  // a parse error is answered by Hummingbird
                withOutboundHeaderValidation: false  // HTTPTypes validates fields already
            )
            try pipeline.addHandler(HTTP10KeepAliveHandler())
            try pipeline.addHandler(RequestHeadCheck(authority: warm.authority, accessKey: accessKey))
            try pipeline.addHandler(HangUpHandler())
            try pipeline.addHandler(ConnectionLifecycleHandler(idleTimeout: idleTimeout))
            try pipeline.addHandler(WarmRangeHandler(requests: warm, logs: logs))
            try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            return try NIOAsyncChannel(
                wrappingChannelSynchronously: channel,
                configuration: .init(isOutboundHalfClosureEnabled: true)
            )
        }
    }

    func handle(value: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: value, logger: logger)
    }
}

/// Marks an HTTP/1.0 request without `Connection: keep-alive` (and an HTTP/1.1 one that asks
/// to close) with `Connection: close`, the one signal Hummingbird closes a connection on after
/// its response.
final class HTTP10KeepAliveHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data), !head.isKeepAlive else {
            context.fireChannelRead(data)
            return
        }
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }
}

/// Closes the connection as soon as the client has closed its side.
///
/// Hummingbird lets a client half-close (it allows remote half-closure), so a player that hung
/// up while its response waited for a slow origin left the socket in CLOSE-WAIT until the
/// response was written. Players never half-close to read an answer: a closed input means the
/// player has gone, and its read stops at the next write.
final class HangUpHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
