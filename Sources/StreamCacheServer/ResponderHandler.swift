import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import StreamCache

/// The half of the proxy's executor that waits: every request the event loop does not answer
/// itself (``WarmRangeHandler``) runs the responder in a task of its own, whose answer is
/// written back on the connection.
///
/// Requests that arrive while one is answered wait their turn, so answers keep the order of the
/// requests. A streamed body waits while the connection cannot take more (backpressure from the
/// player to the read behind it). When the connection closes, the task answering on it is
/// cancelled, which ends the origin fetch behind it if nobody else needs it.
final class ResponderHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    typealias Respond = @Sendable (HTTPRequest, ProxyRequestContext) async -> ProxyResponse

    /// Requests waiting behind the one answered before the connection stops reading (a client
    /// pipelining without end). Until it reads again, a hang-up is seen at the next write.
    private static let mostWaiting = 16

    private let respond: Respond
    private let connections: OpenConnections
    /// The connection's addresses, taken when its first request comes here.
    private var requestContext: ProxyRequestContext?
    /// The request whose head has come and whose end has not.
    private var reading: HTTPRequest?
    /// Whole requests waiting for the one being answered.
    private var waiting: [HTTPRequest] = []
    /// The task answering a request, if one is.
    private var answering: Task<Void, Never>?
    /// Streamed bodies waiting for the connection to take more.
    private var writableWaiters: [EventLoopPromise<Void>] = []
    /// Where spans of cache files are written: below the translation from HTTPTypes, as a file
    /// region in an HTTP/1 body part.
    private var fileSpanContext: ChannelHandlerContext?

    init(connections: OpenConnections, respond: @escaping Respond) {
        self.connections = connections
        self.respond = respond
    }

    func handlerAdded(context: ChannelHandlerContext) {
        fileSpanContext = try? context.pipeline.syncOperations.context(handlerType: HTTP1ToHTTPServerCodec.self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        fileSpanContext = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            reading = head
        case .body:
            // A GET or HEAD carries none; a body of another method is refused with its request.
            break
        case .end:
            guard let request = reading else { return }
            reading = nil
            waiting.append(request)
            if waiting.count >= Self.mostWaiting { _ = context.channel.setOption(ChannelOptions.autoRead, value: false) }
            if answering == nil { answerNext(context: context) }
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { wakeWriters(with: .success(())) }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        waiting = []
        answering?.cancel()
        wakeWriters(with: .failure(ChannelError.ioOnClosedChannel))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Starts the task that answers the first waiting request.
    private func answerNext(context: ChannelHandlerContext) {
        guard !waiting.isEmpty, context.channel.isActive else { return }
        let request = waiting.removeFirst()
        if waiting.count == Self.mostWaiting - 1 { _ = context.channel.setOption(ChannelOptions.autoRead, value: true) }
        let requestContext = self.requestContext ?? ProxyRequestContext(channel: context.channel)
        self.requestContext = requestContext
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let boundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        connections.answerStarted()
        answering = Task { [respond, connections, channel = context.channel] in
            let response = await respond(request, requestContext)
            let closeAsked = request.headerFields[.connection]?.lowercased() == "close"
            await ResponderHandler.write(response, on: channel, handler: handler) { wentOut in
                connections.answerEnded()
                handler.value.answered(close: !wentOut || closeAsked, context: boundContext.value)
            }
        }
    }

    /// The answering task has written its response.
    private func answered(close: Bool, context: ChannelHandlerContext) {
        answering = nil
        if close {
            context.close(promise: nil)
        } else {
            answerNext(context: context)
        }
    }

    /// A future that succeeds once the connection can take more bytes.
    private func untilWritable(_ channel: any Channel) -> EventLoopFuture<Void> {
        guard channel.isActive else { return channel.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel) }
        guard !channel.isWritable else { return channel.eventLoop.makeSucceededVoidFuture() }
        let promise = channel.eventLoop.makePromise(of: Void.self)
        writableWaiters.append(promise)
        return promise.futureResult
    }

    /// Sends `count` bytes of `file`, open as `descriptor` (a duplicate, closed once they are
    /// sent), from `offset`; succeeds once the connection can take more.
    private func sendFile(
        _ file: CacheFile,
        _ descriptor: Int32,
        offset: Int64,
        count: Int,
        on channel: any Channel
    ) -> EventLoopFuture<Void> {
        let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: descriptor)
        guard let context = fileSpanContext, channel.isActive else {
            try? handle.close()
            return channel.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel)
        }
        let region = FileRegion(fileHandle: handle, readerIndex: Int(offset), endIndex: Int(offset) + count)
        let part = HTTPServerResponsePart.body(.fileRegion(region))
        let written = context.writeAndFlush(NIOAny(part))
        written.whenComplete { _ in try? handle.close() }
        FileRegionWatch.watch(written, file: file, end: offset + Int64(count), on: channel)
        return untilWritable(channel)
    }

    private func wakeWriters(with result: Result<Void, any Error>) {
        let waiters = writableWaiters
        writableWaiters = []
        for waiter in waiters { waiter.completeWith(result) }
    }

    /// Writes `response` on `channel` from the answering task, then, on the event loop once its
    /// end is written, calls `finish` with whether the whole response went out (so the
    /// connection can carry another). It returns without waiting for the end.
    private static func write(
        _ response: ProxyResponse,
        on channel: any Channel,
        handler: NIOLoopBound<ResponderHandler>,
        then finish: @escaping @Sendable (Bool) -> Void
    ) async {
        var fields = response.headers
        if fields[.date] == nil { fields[.date] = HTTPDate.format(Date()) }
        SandboxFields.apply(to: &fields)
        channel.write(HTTPResponsePart.head(HTTPResponse(status: response.status, headerFields: fields)), promise: nil)
        do {
            switch response.body {
            case .empty:
                break
            case .bytes(let buffer):
                channel.write(HTTPResponsePart.body(buffer), promise: nil)
            case .stream(_, let write):
                channel.flush()
                try await write(
                    ResponseBodyWriter(
                        send: { buffer in
                            guard channel.isActive else { throw ChannelError.ioOnClosedChannel }
                            channel.writeAndFlush(HTTPResponsePart.body(buffer), promise: nil)
                            if !channel.isWritable {
                                try await channel.eventLoop.flatSubmit { handler.value.untilWritable(channel) }.get()
                            }
                        },
                        sendFile: { file, offset, count in
                            guard channel.isActive else { throw ChannelError.ioOnClosedChannel }
                            let descriptor = try file.duplicateDescriptor()
                            try await channel.eventLoop.flatSubmit {
                                handler.value.sendFile(file, descriptor, offset: offset, count: count, on: channel)
                            }.get()
                        }
                    )
                )
            }
            // Not awaited: what follows the end runs on the event loop, without a hop back here.
            channel.writeAndFlush(HTTPResponsePart.end(nil)).whenComplete { result in
                guard case .success = result else {
                    channel.close(promise: nil)
                    return finish(false)
                }
                finish(true)
            }
        } catch {
            // A body cut short cannot be finished: the client sees the connection close.
            channel.close(promise: nil)
            channel.eventLoop.execute { finish(false) }
        }
    }
}
