import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// Drives a proxy connection's state machine (``ProxyConnection``): it feeds it the
/// connection's events (request parts, answers written, the idle check, graceful shutdown, the
/// hang-up) and runs the actions it returns.
///
/// Every request head, whichever parsed it (``ConnectionFront`` or NIO's decoder), is admitted
/// here (``RequestAdmission``) and offered to the cache hits (``CacheHits``), which are answered
/// on the event loop (`ProxyConnectionHandler+CacheHit.swift`); the responder answers the rest
/// in a task of its own (`ProxyConnectionHandler+Responder.swift`).
final class ProxyConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Answers a request the cache hits did not, with the verdict of its admission.
    typealias Respond = @Sendable (HTTPRequest, ProxyRequest.Verdict, RequestBody?, ProxyRequestContext) async ->
        ProxyResponse

    /// The front of the pipeline, where encoded answers are written.
    let front = ConnectionFront()
    let hits: any CacheHitAnswering
    let logs: ProxyLogs
    let respond: Respond
    let connections: OpenConnections
    var machine: ProxyConnection<ProxyRequest>
    private var admission: RequestAdmission
    /// The target of the last cache hit asked for, judged.
    var target: CacheHits.Target?
    var context: ChannelHandlerContext?
    var requestContext: ProxyRequestContext?
    private var check: Scheduled<Void>?
    /// The task answering a request, if one is.
    var answering: Task<Void, Never>?
    /// The body of the last request read, while it is read.
    private var readingBody: RequestBody?
    /// Streamed bodies waiting for the connection to take more.
    var writableWaiters: [EventLoopPromise<Void>] = []

    init(
        idleTimeout: Duration,
        admission: RequestAdmission,
        hits: any CacheHitAnswering,
        logs: ProxyLogs,
        connections: OpenConnections,
        respond: @escaping Respond
    ) {
        self.machine = ProxyConnection(idleTimeout: .nanoseconds(Int64(idleTimeout / .nanoseconds(1))), now: .now())
        self.admission = admission
        self.hits = hits
        self.logs = logs
        self.connections = connections
        self.respond = respond
        front.connection = self
    }

    // MARK: Events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        machine = ProxyConnection(idleTimeout: machine.idleTimeout, now: context.eventLoop.now)
        requestContext = ProxyRequestContext(channel: context.channel)
        if context.channel.isActive { run(machine.firstCheck) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelCheck()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        if check == nil { run(machine.firstCheck) }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            read(head)
        case .body(let buffer):
            // A GET or HEAD carries none; another method's is relayed with its request.
            readingBody?.append(buffer)
            run(machine.bodyRead(now: now))
        case .end:
            readingBody?.end(whole: true)
            readingBody = nil
            run(machine.endRead(now: now))
        }
    }

    /// A request head that came whole and alone in one read, with no body (``ConnectionFront``).
    func wholeRequestRead(_ head: HTTPRequestHead) {
        read(head)
        run(machine.endRead(now: now))
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        run(machine.writabilityChanged(writable: context.channel.isWritable))
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelCheck()
        readingBody?.end(whole: false)
        readingBody = nil
        run(machine.inactive())
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        run(machine.quiesce())
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A head the decoder could not parse was answered 400 before this handler; anything
        // else unexpected ends the connection too.
        context.close(promise: nil)
    }

    // MARK: Actions

    private func read(_ head: HTTPRequestHead) {
        let request = admission.admit(head)
        readingBody = request.body
        run(machine.headRead(request, closes: request.closesConnection, now: now))
    }

    func run(_ action: ProxyConnection<ProxyRequest>.Action) {
        guard let context else {
            // Removed from the pipeline: nothing more is written, so nothing waits to write.
            if case .endAnswers(let cancel) = action {
                wakeWriters(with: .failure(ChannelError.ioOnClosedChannel))
                if cancel { answering?.cancel() }
            }
            return
        }
        switch action {
        case .none:
            break
        case .answerFromCache(let request):
            answerFromCache(request, context: context)
        case .startResponder(let request, let resumeReading):
            if resumeReading { _ = context.channel.setOption(ChannelOptions.autoRead, value: true) }
            startResponder(request, context: context)
        case .stopReading:
            _ = context.channel.setOption(ChannelOptions.autoRead, value: false)
        case .reportWhenWritten:
            // `answerFromCache` reports it, where the write's future is.
            break
        case .close:
            cancelCheck()
            context.close(promise: nil)
        case .checkAt(let deadline):
            cancelCheck()
            check = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
                check = nil
                run(machine.idleCheck(now: now))
            }
        case .resumeWriters:
            wakeWriters(with: .success(()))
        case .endAnswers(let cancel):
            wakeWriters(with: .failure(ChannelError.ioOnClosedChannel))
            if cancel { answering?.cancel() }
        }
    }

    /// The event loop's time (a testing loop's own).
    var now: NIODeadline { context?.eventLoop.now ?? .now() }

    private func cancelCheck() {
        check?.cancel()
        check = nil
    }
}
