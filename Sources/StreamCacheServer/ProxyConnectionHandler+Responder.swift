import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1
import StreamCache

/// The half of a connection's answers that waits: the responder runs in a task of its own per
/// request, whose answer is written back on the connection. A streamed body waits while the
/// connection cannot take more (backpressure from the player to the read behind it). When the
/// connection closes, the task answering on it is cancelled, which ends the origin fetch behind
/// it if nobody else needs it.
extension ProxyConnectionHandler {
    /// Starts the task that answers `request`.
    func startResponder(_ request: ProxyRequest, context: ChannelHandlerContext) {
        guard front.addHTTPHandlers(), context.channel.isActive else { return }
        guard let converted = try? HTTPRequest(request.head, secure: false, splitCookie: false) else {
            // A method HTTPTypes does not take: nothing to answer it with.
            run(machine.responderAnswered(wentOut: false, now: now))
            return
        }
        let requestContext = self.requestContext ?? ProxyRequestContext(channel: context.channel)
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let framing = ResponseFraming(request, last: false)
        connections.answerStarted()
        answering = Task {
            [respond, connections, channel = context.channel, verdict = request.verdict, body = request.body] in
            let response = await respond(converted, verdict, body, requestContext)
            await ProxyConnectionHandler.write(response, framing: framing, on: channel, handler: handler) { wentOut in
                connections.answerEnded()
                let handler = handler.value
                handler.answering = nil
                handler.run(handler.machine.responderAnswered(wentOut: wentOut, now: handler.now))
            }
        }
    }

    /// A future that succeeds once the connection can take more bytes.
    private func untilWritable(_ channel: any Channel) -> EventLoopFuture<Void> {
        guard channel.isActive else { return channel.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel) }
        guard !machine.isWritable else { return channel.eventLoop.makeSucceededVoidFuture() }
        let promise = channel.eventLoop.makePromise(of: Void.self)
        writableWaiters.append(promise)
        return promise.futureResult
    }

    func wakeWriters(with result: Result<Void, any Error>) {
        let waiters = writableWaiters
        writableWaiters = []
        for waiter in waiters { waiter.completeWith(result) }
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
        guard channel.isActive else {
            try? handle.close()
            return channel.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel)
        }
        let region = FileRegion(fileHandle: handle, readerIndex: Int(offset), endIndex: Int(offset) + count)
        // Through the HTTP encoder, which frames it as a chunk when the body's length is unknown.
        let written = channel.writeAndFlush(HTTPServerResponsePart.body(.fileRegion(region)))
        written.whenComplete { _ in try? handle.close() }
        FileRegionWatch.watch(written, file: file, end: offset + Int64(count), on: channel)
        return untilWritable(channel)
    }

    /// Writes `response` on `channel` from the answering task, then, on the event loop once its
    /// end is written, calls `finish` with whether the whole response went out (so the
    /// connection can carry another). It returns without waiting for the end.
    private static func write(
        _ response: ProxyResponse,
        framing: ResponseFraming,
        on channel: any Channel,
        handler: NIOLoopBound<ProxyConnectionHandler>,
        then finish: @escaping @Sendable (Bool) -> Void
    ) async {
        var fields = response.headers
        if fields[.date] == nil { fields[.date] = HTTPDate.format(Date()) }
        let head = framing.head(of: HTTPResponse(status: response.status, headerFields: fields))
        // Whether it is the connection's last answer is known when its head goes out: a stop
        // may have come while it was made. (Written on the event loop before anything written
        // after it from here, which goes there in order.)
        let writeHead: @Sendable () -> Void = {
            let last = handler.value.machine.answersLast && !framing.closes
            channel.write(HTTPServerResponsePart.head(last ? ResponseFraming.closing(head) : head), promise: nil)
        }
        if channel.eventLoop.inEventLoop { writeHead() } else { channel.eventLoop.execute(writeHead) }
        do {
            switch response.body {
            case .empty:
                break
            case .bytes(let buffer):
                channel.write(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: nil)
            case .stream(_, let write):
                channel.flush()
                try await write(
                    ResponseBodyWriter(
                        send: { buffer in
                            guard channel.isActive else { throw ChannelError.ioOnClosedChannel }
                            channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: nil)
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
            channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { result in
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
