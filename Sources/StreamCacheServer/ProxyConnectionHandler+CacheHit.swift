import Foundation
import NIOCore
import NIOHTTP1
import StreamCache

extension ProxyConnectionHandler {
    /// Answers `request` from a cache file if ``CacheHits`` says it can, writing the encoded
    /// answer at the front (``ConnectionFront``); else hands it back to the machine for the
    /// responder.
    func answerFromCache(_ request: ProxyRequest, context: ChannelHandlerContext) {
        guard let front = front.context,
            var answer = hits.answer(
                request,
                framing: ResponseFraming(request, last: machine.answersLast),
                target: &target,
                allocator: context.channel.allocator
            ),
            let (written, fromFile) = send(&answer, to: request.head, through: front, context: context)
        else {
            run(machine.cacheHitDeclined(request))
            return
        }
        let action = machine.cacheHitAnswered(inFlight: fromFile, now: now)
        guard case .reportWhenWritten = action else { return run(action) }
        written.assumeIsolated().whenComplete { [self] _ in run(machine.cacheHitWritten(now: now)) }
    }

    /// Writes the whole answer through `front`, the front's context: a range up to
    /// ``CacheHits/bufferedLimit`` is read into the buffer that holds the encoded head, a larger
    /// one is sent with `sendfile` from a descriptor of its own (a `FileRegion`).
    ///
    /// - Returns: the write, and whether it sends from the file (so its bytes go out later);
    ///   `nil` if the bytes could not be read, with nothing written: the responder answers then.
    private func send(
        _ answer: inout CacheHits.Answer,
        to request: HTTPRequestHead,
        through front: ChannelHandlerContext,
        context: ChannelHandlerContext
    ) -> (EventLoopFuture<Void>, fromFile: Bool)? {
        // The clock only for the access log.
        let startedAt = logs.recordsEveryExchange ? ContinuousClock.now : nil
        let file = answer.resource.file
        let range = answer.range
        let count = Int(range.count)
        var region: FileRegion?
        do {
            if range.count <= CacheHits.bufferedLimit {
                let read = try answer.head.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
                    try file.read(
                        into: UnsafeMutableRawBufferPointer(rebasing: pointer[..<count]),
                        at: range.lowerBound
                    )
                }
                // Read, then checked: nothing changed the file before the bytes were read. The event
                // loop never waits on a write under way (``CacheFile/isTrustedNow()``).
                guard read == count, file.isTrustedNow() else { return nil }
            } else {
                // Checked now: `sendfile` past the file's end would send nothing, again and again;
                // what changes the file while it is sent ends the connection (FileRegionWatch).
                guard file.holds(range), file.isTrustedNow() else { return nil }
                region = FileRegion(
                    fileHandle: NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: try file.duplicateDescriptor()),
                    readerIndex: Int(range.lowerBound),
                    endIndex: Int(range.upperBound)
                )
            }
        } catch {
            return nil
        }
        let written: EventLoopFuture<Void>
        if let region {
            front.write(NIOAny(IOData.byteBuffer(answer.head)), promise: nil)
            written = front.writeAndFlush(NIOAny(IOData.fileRegion(region)))
            FileRegionWatch.watch(written, file: file, end: range.upperBound, on: context.channel)
        } else {
            written = front.writeAndFlush(NIOAny(IOData.byteBuffer(answer.head)))
        }
        let entry = startedAt != nil ? logEntry(request, answer: answer) : nil
        // Nothing more to do once it is written: the common small range.
        guard region != nil || entry != nil else { return (written, false) }
        written.assumeIsolated().whenComplete { [logs] result in
            try? region?.fileHandle.close()
            guard var entry, let startedAt else { return }
            entry.seconds = startedAt.duration(to: .now).seconds
            if case .failure = result {
                entry.sentBytes = 0
                entry.cacheBytes = 0
                entry.outcome = "client-went-away"
            }
            logs.post(entry)
        }
        return (written, region != nil)
    }

    private func logEntry(_ request: HTTPRequestHead, answer: CacheHits.Answer) -> LogEntry {
        LogEntry(
            date: Date(),
            clientIP: requestContext?.remoteAddress?.ipAddress,
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
