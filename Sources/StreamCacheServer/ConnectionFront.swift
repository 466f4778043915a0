import NIOCore
import NIOHTTP1

/// The front of a proxy connection's pipeline, before HTTP parsing: it reads a request head that
/// arrived whole and alone in one read itself (``WholeRequestHead``) and hands it to the
/// connection (``ProxyConnectionHandler``), and the connection writes the answers it makes from
/// a cache file here, encoded (head and body as bytes), past the HTTP encoder.
///
/// A player's ranges mostly come so, one request per read: they are parsed once, by the
/// stricter parse, and skip NIO's decoder and what it costs. Any other read goes on to the
/// decoder, and so does every read of the connection after it (the decoder may hold bytes of a
/// partial head, a second request or a body). NIO's HTTP handlers (the decoder, the encoder and
/// its error handler, which answers a head it cannot parse with `400` and closes) are added
/// the first time they are needed: a connection whose every request is a whole head answered
/// from a cache file never sets them up.
final class ConnectionFront: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// Where encoded answers are written, while the handler is in the pipeline.
    private(set) var context: ChannelHandlerContext?
    /// The connection whole heads are handed to (which holds this handler).
    weak var connection: ProxyConnectionHandler?
    /// Whether a read went on to the decoder that may have left bytes in it.
    private var decoderMayHoldBytes = false
    /// Whether a read of the current read cycle went on. When none did, the handlers after this
    /// one have nothing to complete, and the cycle's end stops here.
    private var passedReads = false
    private var httpHandlersAdded = false

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !decoderMayHoldBytes {
            if let head = WholeRequestHead.parse(unwrapInboundIn(data)) {
                connection?.wholeRequestRead(head)
                return
            }
            decoderMayHoldBytes = true
        }
        guard addHTTPHandlers() else { return }
        passedReads = true
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard passedReads else { return }
        passedReads = false
        context.fireChannelReadComplete()
    }

    /// Adds NIO's HTTP/1.1 handlers after this one, once; `false` (and the connection closed) if
    /// they could not be added.
    func addHTTPHandlers() -> Bool {
        guard !httpHandlersAdded, let context else { return true }
        httpHandlersAdded = true
        do {
            try context.pipeline.syncOperations.configureHTTPServerPipeline(
                position: .after(self),
                withPipeliningAssistance: false,  // the connection answers one request at a time
                withErrorHandling: true,  // a parse error is answered 400, and the connection closed
                withOutboundHeaderValidation: false  // HTTPTypes validates fields already
            )
            return true
        } catch {
            context.close(promise: nil)
            return false
        }
    }
}
