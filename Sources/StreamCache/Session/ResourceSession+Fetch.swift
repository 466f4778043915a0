import Foundation

/// Where and how a fetch writes the body it was accepted with.
struct FetchTarget: Sendable {
    let file: CacheFile
    let recordID: Int64
    /// Bytes at the start of the body to drop (a `200` answer to a request that starts later).
    let skip: Int64
    /// The offset the body must end at, if the response said.
    let expectedEnd: Int64?
    /// Where to stop writing for now.
    let limit: Int64
    /// Whether a body that ends before `expectedEnd` is known tells the resource's length (`200`).
    let endIsLength: Bool
}

extension ResourceSession {
    /// Runs fetch `id` to its end and reports how it ended: one request after another, each for
    /// twice the bytes of the one before (up to ``CacheConfiguration/maxFetchSpan``), while a
    /// reader wants more.
    nonisolated func run(fetchID id: Int, request: OriginRequest) async {
        var failure: Error?
        var request = request
        var span = configuration.firstFetchSpan
        let writer = FetchWriter(index: index, configuration: configuration)
        do {
            while try await transfer(fetchID: id, request: request, writer: writer) {
                span = min(span * 2, configuration.maxFetchSpan)
                guard let next = await nextRequest(of: id, span: span) else { break }
                request = next
            }
        } catch {
            failure = error
        }
        do {
            try await writer.finish()
        } catch {
            if failure == nil { failure = error }
        }
        await fetchEnded(id, error: failure)
    }

    /// Sends one request of fetch `id` and writes its body.
    ///
    /// - Returns: whether the body was written to the end of what was asked, so the fetch may
    ///   go on with another request.
    nonisolated private func transfer(
        fetchID id: Int,
        request: OriginRequest,
        writer fetchWriter: FetchWriter
    ) async throws -> Bool {
        let first = request.range?.first ?? 0
        return try await origin.fetch(request) { head, body in
            let answer = try OriginAnswer.judge(head, first: first, last: request.range?.last)
            guard let target = try await self.accept(answer, fetchID: id, sentIfRange: request.ifRange != nil) else {
                return false
            }
            let writer = try await fetchWriter.writer(for: target)
            do {
                var offset = first
                var toSkip = target.skip
                var limit = target.limit
                var endedEarly = false
                for try await chunk in body {
                    var bytes = chunk[...]
                    if toSkip > 0 {
                        let dropped = min(Int64(bytes.count), toSkip)
                        bytes = bytes.dropFirst(Int(dropped))
                        toSkip -= dropped
                        if bytes.isEmpty { continue }
                    }
                    if let expectedEnd = target.expectedEnd, offset + Int64(bytes.count) > expectedEnd {
                        throw StreamCacheError(
                            .originProtocolViolation,
                            "origin \(head.url.host ?? "") sent more bytes than its Content-Range/Content-Length said"
                        )
                    }
                    let usable = bytes.prefix(Int(min(Int64(bytes.count), limit - offset)))
                    try usable.withUnsafeBytes { try target.file.write($0, at: offset) }
                    writer.wrote(ByteRange(offset, offset + Int64(usable.count)))
                    offset += Int64(usable.count)
                    try await writer.synchronizeIfDue()
                    // Bytes past the limit were dropped: the body no longer lines up with
                    // `offset`, so this request ends here whatever the limit becomes.
                    let cut = usable.count < bytes.count
                    switch await self.fetch(id, wroteUpTo: offset) {
                    case .proceed(let newLimit):
                        limit = newLimit
                    case .finishRequest(let newLimit) where !target.endIsLength:
                        // A bounded answer to a bounded request: its bytes are on their way.
                        limit = newLimit
                    case .finishRequest, .stop:
                        endedEarly = true
                    }
                    if endedEarly || cut {
                        endedEarly = true
                        break
                    }
                    if offset >= limit {
                        endedEarly = true
                        break
                    }
                }
                if !endedEarly {
                    if let expectedEnd = target.expectedEnd, offset < expectedEnd {
                        throw StreamCacheError(
                            .originUnreachable,
                            "origin \(head.url.host ?? "") ended the body after \(offset - first) of \(expectedEnd - first) bytes"
                        )
                    }
                    if target.endIsLength && target.expectedEnd == nil { try await self.learnLength(offset) }
                }
                return !endedEarly && target.expectedEnd.map { offset >= $0 } == true
            } catch {
                try? await fetchWriter.finish()
                throw error
            }
        }
    }

    /// Decides what fetch `id` does with an origin answer, learning or replacing content info.
    ///
    /// - Returns: where to write the body, or `nil` if there is nothing to write.
    func accept(_ answer: OriginAnswer, fetchID id: Int, sentIfRange: Bool) async throws -> FetchTarget? {
        guard let fetch = fetches[id], fetch.generation == generation else { throw CancellationError() }
        switch answer {
        case .notModified:
            throw StreamCacheError(.originProtocolViolation, "origin answered 304 to an unconditional request")
        case .endOfResource(let total, let newInfo):
            var info = record.info.length == nil ? newInfo : record.info
            info.length = total
            if record.info.length == nil {
                try await learn(info)
            } else if record.info.length != total {
                try await replaceVersion(with: info, survivor: nil)
            }
            return nil
        case .partial(let range, let newInfo):
            if record.info.length == nil {
                try await learn(newInfo)
            } else if record.info.isDifferentVersion(from: newInfo) {
                try await replaceVersion(with: newInfo, survivor: id)
            }
            return try target(for: id, skip: 0, expectedEnd: range.upperBound, endIsLength: false)
        case .full(let newInfo):
            var info = newInfo
            let changed = record.info.length != nil && record.info.isDifferentVersion(from: newInfo)
            info.byteRangeAccess = changed && sentIfRange
            if record.info.length == nil {
                try await learn(info)
            } else if changed {
                try await replaceVersion(with: info, survivor: id)
            } else if record.info.byteRangeAccess {
                info = record.info
                info.byteRangeAccess = false
                try await learn(info)
            }
            return try target(for: id, skip: fetch.start, expectedEnd: newInfo.length, endIsLength: true)
        }
    }

    private func target(for id: Int, skip: Int64, expectedEnd: Int64?, endIsLength: Bool) throws -> FetchTarget {
        guard let fetch = fetches[id], fetch.generation == generation else { throw CancellationError() }
        return FetchTarget(
            file: file,
            recordID: record.id,
            skip: skip,
            expectedEnd: expectedEnd,
            limit: limit(of: fetch),
            endIsLength: endIsLength
        )
    }

    /// Stores the length learned when a `200` body without `Content-Length` ended.
    func learnLength(_ length: Int64) async throws {
        guard record.info.length == nil else { return }
        var info = record.info
        info.length = length
        try await learn(info)
    }
}

/// The durable writer of a fetch, kept from one request to the next while they write the same
/// file and index row, so a request's end does not wait for a sync.
final class FetchWriter: @unchecked Sendable {
    // Used by the one task that runs the fetch, one request after another.
    private let index: CacheIndex
    private let configuration: CacheConfiguration
    private var current: (writer: DurableWriter, file: CacheFile, recordID: Int64)?

    init(index: CacheIndex, configuration: CacheConfiguration) {
        self.index = index
        self.configuration = configuration
    }

    /// The writer for `target`: the current one if it writes the same file and row, else a new
    /// one (after the current one has made its bytes durable and recorded them).
    func writer(for target: FetchTarget) async throws -> DurableWriter {
        if let current, current.file === target.file, current.recordID == target.recordID { return current.writer }
        try await finish()
        let writer = DurableWriter(
            file: target.file,
            recordID: target.recordID,
            index: index,
            configuration: configuration
        )
        current = (writer, target.file, target.recordID)
        return writer
    }

    /// Makes the bytes written so far durable and records them.
    func finish() async throws {
        guard let current else { return }
        self.current = nil
        try await current.writer.finish()
    }
}
