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
enum ProxyPipeline {
    static func setUp(
        _ channel: any Channel,
        idleTimeout: Duration,
        warm: WarmRequests,
        logs: ProxyLogs,
        accessKey: String?,
        responder: ResponderHandler
    ) throws {
        let pipeline = channel.pipeline.syncOperations
        let outlet = EncodedResponseOutlet()
        let warmRanges = WarmRangeHandler(requests: warm, logs: logs, outlet: outlet)
        try pipeline.addHandler(outlet)
        try pipeline.addHandler(WarmShortcutHandler(warm: warmRanges, accessKey: accessKey))
        try pipeline.configureHTTPServerPipeline(
            withPipeliningAssistance: false,  // the responder handler answers one request at a time
            withErrorHandling: true,  // a parse error is answered 400, and the connection closed
            withOutboundHeaderValidation: false  // HTTPTypes validates fields already
        )
        try pipeline.addHandler(RequestHeadCheck(authority: warm.authority, accessKey: accessKey))
        try pipeline.addHandler(ConnectionLifecycleHandler(idleTimeout: idleTimeout))
        try pipeline.addHandler(warmRanges)
        try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
        try pipeline.addHandler(responder)
    }
}
