import NIOCore
import NIOHTTP1

/// Hands the warm path (``WarmRangeHandler``) a request before NIO's HTTP decoder reads it,
/// when its head arrived whole and alone in one read (``WholeRequestHead``): a player's ranges
/// on a kept-alive connection skip the decoder and the handlers between, and their share of a
/// warm range's time.
///
/// Only while the decoder holds no bytes: a read that is not such a head goes on to the decoder,
/// and so does every read of the connection after it. A head the warm path does not answer goes
/// on as it came, and the decoder reads it whole. On a server with an access key, the head must
/// begin with it, which is removed as ``RequestHeadCheck`` removes it (without it, the request
/// goes on, and that handler refuses it).
final class WarmShortcutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let warm: WarmRangeHandler
    /// `/<key>` when paths must begin with an access key.
    private let keyPrefix: String?
    /// Whether a read went on to the decoder that may have left bytes in it: a partial head, a
    /// second request, a body.
    private var decoderMayHoldBytes = false
    /// Whether a read of the current read cycle went on. When none did, the handlers after this
    /// one have nothing to complete, and the cycle's end stops here (the event passes eight
    /// handlers, none of which acts on it alone).
    private var passedReads = false
    /// Adds the handlers that parse what this one passes on, before the first read it passes
    /// (``ProxyPipeline``); `nil` once done.
    private var addParsing: ((ChannelPipeline.SynchronousOperations, WarmShortcutHandler) throws -> Void)?

    init(
        warm: WarmRangeHandler,
        accessKey: String?,
        addParsing: @escaping (ChannelPipeline.SynchronousOperations, WarmShortcutHandler) throws -> Void
    ) {
        self.warm = warm
        self.keyPrefix = accessKey.map { "/" + $0 }
        self.addParsing = addParsing
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !decoderMayHoldBytes {
            if var head = WholeRequestHead.parse(unwrapInboundIn(data)) {
                if unkey(&head), warm.answerUnread(head) { return }
            } else {
                decoderMayHoldBytes = true
            }
        }
        if let addParsing {
            self.addParsing = nil
            do {
                try addParsing(context.pipeline.syncOperations, self)
            } catch {
                context.close(promise: nil)
                return
            }
        }
        passedReads = true
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard passedReads else { return }
        passedReads = false
        context.fireChannelReadComplete()
    }

    /// Removes the access key from the head's target; `false` if it does not begin with it.
    private func unkey(_ head: inout HTTPRequestHead) -> Bool {
        guard let keyPrefix else { return true }
        guard let unkeyed = RequestHeadCheck.removing(keyPrefix, from: head.uri) else { return false }
        head.uri = unkeyed
        return true
    }
}
