import NIOCore

/// The front of a proxy connection's pipeline, where ``WarmRangeHandler`` writes its responses
/// already encoded (head and body as bytes): they go to the socket without passing the HTTP
/// encoder and the handlers between, which cost a fifth of a warm range's time of our own.
///
/// The handlers they pass by learn of each such response from ``EncodedResponseWritten``,
/// an outbound event the warm handler sends through them.
final class EncodedResponseOutlet: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// Where to write, while the handler is in the pipeline.
    private(set) var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }
}

/// A whole response was written through the ``EncodedResponseOutlet``: to the handlers it
/// passed by, what the `.end` of a response is.
struct EncodedResponseWritten {
    /// Completes when the response has gone out (or failed to).
    let written: EventLoopFuture<Void>
    /// Whether the handlers it passed by read its request, or it was answered before the HTTP
    /// decoder (``WarmShortcutHandler``).
    let requestWasRead: Bool
}
