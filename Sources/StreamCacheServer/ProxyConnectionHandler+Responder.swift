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
        let framing = ResponseFraming(
            version: request.head.version,
            closes: request.closesConnection || machine.answersLast,
            sandboxed: !request.fields.opensNoDocument
        )
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

    /// How a response's head tells the client what becomes of the connection.
    struct ResponseFraming: Sendable {
        let version: HTTPVersion
        /// Whether the connection closes after the response.
        let closes: Bool
        /// Whether the answer carries the sandbox (``SandboxFields``): the request may open it as
        /// a document.
        let sandboxed: Bool

        func head(of response: HTTPResponse) -> HTTPResponseHead {
            var head = HTTPResponseHead(response)
            head.version = version.minor == 0 ? .http1_0 : .http1_1
            if closes {
                head.headers.replaceOrAdd(name: "Connection", value: "close")
            } else if version.minor == 0 {
                // An HTTP/1.0 client keeps the connection only when the answer says so.
                head.headers.replaceOrAdd(name: "Connection", value: "keep-alive")
            }
            return head
        }
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
        SandboxFields.apply(to: &fields, sandboxed: framing.sandboxed)
        let head = framing.head(of: HTTPResponse(status: response.status, headerFields: fields))
        channel.write(HTTPServerResponsePart.head(head), promise: nil)
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
