import Foundation

extension ResourceSession {
    /// Bytes `[position, end)` straight from the origin, written nowhere: how a read goes on when
    /// the cache's disk is full, the resource outgrew the budget, or the origin's version moved
    /// under the reader. The answer must be of the version the reader has been reading.
    ///
    /// The origin is read at the reader's pace (see ``PassThrough``); dropping the sequence
    /// cancels the fetch.
    nonisolated func uncached(from position: Int64, end: Int64?, known: ContentInfo) -> PassThrough {
        let request = OriginRequest(
            url: url,
            range: (position, end.map { $0 - 1 }),
            ifRange: known.length == nil ? nil : known.ifRangeValidator
        )
        let session = self
        // A version known without its tag (an origin that tags every response anew) is compared
        // on what it has.
        let moved: @Sendable (ContentInfo) -> Bool = { info in
            var answered = info
            if known.etag == nil { answered.etag = nil }
            guard known.length != nil else { return false }
            if let tag = known.etag, let newTag = answered.etag, tag != newTag { return true }
            return known.isDifferentVersion(from: answered)
        }
        return PassThrough { send in
            try await session.fetchFromOrigin(request) { head, body in
                var skip: Int64
                switch try OriginAnswer.judge(
                    head,
                    first: position,
                    last: end.map { $0 - 1 },
                    keepsCoding: session.environment.configuration.keepsEncodedContent
                ) {
                case .partial(_, let info):
                    guard !moved(info) else {
                        throw StreamCacheError(
                            .resourceChanged,
                            "the resource changed at the origin during the read"
                        )
                    }
                    skip = 0
                case .full(let info):
                    guard !moved(info) else {
                        throw StreamCacheError(
                            .resourceChanged,
                            "the resource changed at the origin during the read"
                        )
                    }
                    skip = position
                case .endOfResource:
                    return
                case .notModified:
                    // Nothing conditional was asked for bytes: a 304 is no answer to this.
                    throw StreamCacheError(
                        .originProtocolViolation,
                        "origin \(head.url.originName) answered 304 Not Modified to a range request"
                    )
                }
                var remaining = end.map { $0 - position } ?? Int64.max
                var chunks = body.makeAsyncIterator()
                while remaining > 0, let chunk = try await chunks.next() {
                    let dropped = Int(min(skip, Int64(chunk.count)))
                    skip -= Int64(dropped)
                    let take = Int(min(Int64(chunk.count - dropped), remaining))
                    guard take > 0 else { continue }
                    remaining -= Int64(take)
                    await send(Array(chunk[dropped..<dropped + take]))
                    try Task.checkCancellation()
                }
            }
        }
    }
}
