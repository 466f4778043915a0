import Foundation
import NIOCore
import NIOHTTP1
import StreamCache

/// Answers on the event loop the requests ``WarmRequests`` says a warm resource answers: a
/// range up to ``bufferedLimit`` is read into the buffer that holds the encoded head, a larger
/// one is sent with `sendfile` from a descriptor of its own (a `FileRegion`). The response goes
/// out through the ``EncodedResponseOutlet``, and an ``EncodedResponseWritten`` tells the
/// handlers between of it. A player's ranges mostly reach it before they are parsed, from the
/// ``WarmShortcutHandler`` (``answerUnread(_:)``); the others pass it parsed. Every other
/// request goes on to the responder, and so does every request that comes while one of the
/// responder's is unanswered, so responses keep the order of their requests.
final class WarmRangeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// Ranges up to this size are read into a buffer; larger ones go by `sendfile`.
    static let bufferedLimit: Int64 = 64 * 1024

    private let requests: WarmRequests
    private let logs: ProxyLogs
    private let outlet: EncodedResponseOutlet
    private var context: ChannelHandlerContext?
    private var local = ConnectionAddress(nil)
    private var remoteIP: String?
    /// The target of the last request, judged.
    private var target: WarmRequests.Target?
    /// Requests passed to the responder whose response has not ended.
    private var forwarded = 0
    /// Whether the request answered here still has parts to come, which are dropped.
    private var droppingRequest = false
    /// The target of a head ``answerUnread(_:)`` declined, which the decoder reads next: it goes
    /// on to the responder without being judged again.
    private var declinedTarget: String?

    init(requests: WarmRequests, logs: ProxyLogs, outlet: EncodedResponseOutlet) {
        self.requests = requests
        self.logs = logs
        self.outlet = outlet
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        local = ConnectionAddress(context.channel.localAddress)
        remoteIP = context.channel.remoteAddress?.ipAddress
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Answers `head`, which the handlers before this one did not read (``WarmShortcutHandler``),
    /// if a warm resource answers it and no responder answer is due.
    ///
    /// - Returns: whether it was answered.
    func answerUnread(_ head: HTTPRequestHead) -> Bool {
        guard !droppingRequest, let context else { return false }
        let answered = answer(head, context: context, wasRead: false)
        declinedTarget = answered ? nil : head.uri
        return answered
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            let declined = declinedTarget == head.uri
            declinedTarget = nil
            if !declined, answer(head, context: context, wasRead: true) {
                droppingRequest = true
                return
            }
            forwarded += 1
            context.fireChannelRead(data)
        case .body, .end:
            guard droppingRequest else {
                context.fireChannelRead(data)
                return
            }
            if case .end = unwrapInboundIn(data) { droppingRequest = false }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // A parse error is answered without a request head: never below zero.
        if case .end = unwrapOutboundIn(data) { forwarded = max(0, forwarded - 1) }
        context.write(data, promise: promise)
    }

    /// Answers `head` if a warm resource answers it and no responder answer is due; `wasRead`
    /// says whether the handlers before this one read it.
    ///
    /// - Returns: whether it was answered.
    private func answer(_ head: HTTPRequestHead, context: ChannelHandlerContext, wasRead: Bool) -> Bool {
        guard forwarded == 0, let front = outlet.context,
            var answer = requests.answer(head, target: &target, local: &local, allocator: context.channel.allocator)
        else { return false }
        return send(&answer, to: head, through: front, context: context, wasRead: wasRead)
    }

    /// Writes the whole response through `front`, the outlet's context; `wasRead` says whether
    /// the handlers before this one read its request.
    ///
    /// - Returns: `false` if the bytes could not be read, with nothing written: the responder
    ///   answers then.
    private func send(
        _ answer: inout WarmRequests.Answer,
        to request: HTTPRequestHead,
        through front: ChannelHandlerContext,
        context: ChannelHandlerContext,
        wasRead: Bool
    ) -> Bool {
        // The clock only for the access log.
        let startedAt = logs.recordsEveryExchange ? ContinuousClock.now : nil
        let file = answer.resource.file
        let range = answer.range
        let count = Int(range.count)
        var region: FileRegion?
        do {
            if range.count <= Self.bufferedLimit {
                let read = try answer.head.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
                    try file.read(
                        into: UnsafeMutableRawBufferPointer(rebasing: pointer[..<count]),
                        at: range.lowerBound
                    )
                }
                // Read, then checked: nothing changed the file before the bytes were read.
                guard read == count, file.isTrustedNow() else { return false }
            } else {
                // Checked now: `sendfile` past the file's end would send nothing, again and again;
                // what changes the file while it is sent ends the connection (FileRegionWatch).
                guard file.holds(range), file.isTrustedNow() else { return false }
                region = FileRegion(
                    fileHandle: NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: try file.duplicateDescriptor()),
                    readerIndex: Int(range.lowerBound),
                    endIndex: Int(range.upperBound)
                )
            }
        } catch {
            return false
        }
        let written: EventLoopFuture<Void>
        if let region {
            front.write(NIOAny(IOData.byteBuffer(answer.head)), promise: nil)
            written = front.writeAndFlush(NIOAny(IOData.fileRegion(region)))
            FileRegionWatch.watch(written, file: file, end: range.upperBound, on: context.channel)
        } else {
            written = front.writeAndFlush(NIOAny(IOData.byteBuffer(answer.head)))
        }
        context.triggerUserOutboundEvent(
            EncodedResponseWritten(written: written, requestWasRead: wasRead),
            promise: nil
        )
        let keepAlive = answer.keepAlive
        let entry = startedAt != nil ? logEntry(request, answer: answer) : nil
        // Nothing more to do once it is written: the common small range.
        guard region != nil || !keepAlive || entry != nil else { return true }
        written.assumeIsolated().whenComplete { [logs] result in
            try? region?.fileHandle.close()
            if !keepAlive { context.close(promise: nil) }
            guard var entry, let startedAt else { return }
            entry.seconds = startedAt.duration(to: .now).seconds
            if case .failure = result {
                entry.sentBytes = 0
                entry.cacheBytes = 0
                entry.outcome = "client-went-away"
            }
            logs.post(entry)
        }
        return true
    }

    private func logEntry(_ request: HTTPRequestHead, answer: WarmRequests.Answer) -> LogEntry {
        LogEntry(
            date: Date(),
            clientIP: remoteIP,
            method: request.method.rawValue,
            uri: request.uri,
            range: request.headers.first(name: "range"),
            userAgent: request.headers.first(name: "user-agent"),
            status: Int(answer.status.code),
            sentBytes: answer.range.count,
            cacheBytes: answer.range.count,
            originBytes: 0,
            seconds: 0
        )
    }
}
