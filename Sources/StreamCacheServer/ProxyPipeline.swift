import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// The handlers of a proxy connection, the whole executor: the outlet for responses written
/// encoded (``EncodedResponseOutlet``), the shortcut that hands a request head read whole in one
/// read to the warm path before it is parsed (``WarmShortcutHandler``), HTTP/1.1 parsing, then
/// handlers of the proxy's own.
/// ``RequestHeadCheck`` judges the raw head; ``ConnectionLifecycleHandler`` closes idle
/// connections after the idle timeout and all of them on graceful shutdown once their responses
/// are written; ``WarmRangeHandler`` answers the ranges the cache holds on the event loop;
/// ``ResponderHandler`` runs the responder in a task for everything else. An HTTP/1.0 client
/// without keep-alive gets the close it expects (``RequestHeadCheck`` marks it); a request that
/// cannot be parsed gets `400` and the connection is closed.
///
/// A new connection gets the outlet, the shortcut, the lifecycle handler and the warm path
/// only: the parsing handlers and the responder are added the first time the shortcut passes a
/// read on. A player's request for bytes the cache holds, on a new connection, is answered
/// without them, and without the cost of setting them up.
enum ProxyPipeline {
    static func setUp(
        _ channel: any Channel,
        idleTimeout: Duration,
        warm: WarmRequests,
        logs: ProxyLogs,
        accessKey: String?,
        responder: @escaping () -> ResponderHandler
    ) throws {
        let pipeline = channel.pipeline.syncOperations
        let outlet = EncodedResponseOutlet()
        let warmRanges = WarmRangeHandler(requests: warm, logs: logs, outlet: outlet)
        let lifecycle = ConnectionLifecycleHandler(idleTimeout: idleTimeout)
        let shortcut = WarmShortcutHandler(warm: warmRanges, accessKey: accessKey) { pipeline, shortcut in
            try addParsing(
                to: pipeline,
                after: shortcut,
                before: lifecycle,
                authority: warm.authority,
                accessKey: accessKey,
                responder: responder()
            )
        }
        try pipeline.addHandler(outlet)
        try pipeline.addHandler(shortcut)
        try pipeline.addHandler(lifecycle)
        try pipeline.addHandler(warmRanges)
    }

    /// Adds HTTP/1.1 parsing and ``RequestHeadCheck`` between the shortcut and the lifecycle
    /// handler, and the responder last.
    private static func addParsing(
        to pipeline: ChannelPipeline.SynchronousOperations,
        after shortcut: WarmShortcutHandler,
        before lifecycle: ConnectionLifecycleHandler,
        authority: ListenerAuthority,
        accessKey: String?,
        responder: ResponderHandler
    ) throws {
        try pipeline.configureHTTPServerPipeline(
            position: .after(shortcut),
            withPipeliningAssistance: false,  // the responder handler answers one request at a time
            withErrorHandling: true,  // a parse error is answered 400, and the connection closed
            withOutboundHeaderValidation: false  // HTTPTypes validates fields already
        )
        try pipeline.addHandler(RequestHeadCheck(authority: authority, accessKey: accessKey), position: .before(lifecycle))
        try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
        try pipeline.addHandler(responder)
    }
}
