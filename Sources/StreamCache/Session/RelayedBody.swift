import AsyncAlgorithms

/// The body of an answer the cache may not keep (`no-store`, `Vary: *`), handed by the fetch that
/// got it to the reader it was asked for: the origin is asked once for one answer, and the
/// bytes are written nowhere.
///
/// The fetch sends the body at the reader's pace (``pump(_:_:)``); the reader takes the part it
/// wants (``read(from:end:)``). Either side leaving ends the other: a reader that goes away
/// closes the relay, and the fetch stops reading the body.
final class RelayedBody: Sendable {
    /// The offset of the body's first byte in the resource.
    let start: Int64
    /// What the answer's head said: the fields the reader's own answer carries.
    let info: ContentInfo
    private let channel = AsyncThrowingChannel<[UInt8], any Error>()
    private let closed = Locked(false)

    init(start: Int64, info: ContentInfo) {
        self.start = start
        self.info = info
    }

    /// Sends `first` (bytes of the body already read), then the rest of `body`, each chunk once
    /// the reader has taken the one before; stops when the reader leaves.
    func pump(_ first: ArraySlice<UInt8>, _ body: OriginBody) async {
        do {
            if !first.isEmpty { await channel.send(Array(first)) }
            for try await chunk in body {
                if closed.value { return }
                await channel.send(chunk)
            }
            channel.finish()
        } catch {
            channel.fail(error)
        }
    }

    /// Bytes `[position, end)` of the resource from the body (`end == nil`: to its end); where
    /// the body ends first (it answered a request for the first bytes only), `rest` gives what
    /// follows from the byte it stopped at (`nil`: nothing does).
    func read(from position: Int64, end: Int64?, rest: @escaping @Sendable (Int64) -> PassThrough?) -> PassThrough {
        PassThrough { [self] send in
            guard position >= start else {
                close()
                throw StreamCacheError(.originProtocolViolation, "the origin's answer starts after the byte read")
            }
            var skip = position - start
            var next = position
            var remaining = end.map { $0 - position } ?? Int64.max
            for try await chunk in channel {
                let dropped = Int(min(skip, Int64(chunk.count)))
                skip -= Int64(dropped)
                let take = Int(min(Int64(chunk.count - dropped), remaining))
                guard take > 0 else { continue }
                remaining -= Int64(take)
                next += Int64(take)
                await send(Array(chunk[dropped..<dropped + take]))
                if remaining == 0 { break }
                try Task.checkCancellation()
            }
            close()
            guard remaining > 0, let following = rest(next) else { return }
            for try await chunk in following { await send(chunk) }
        }
    }

    /// Ends the relay: the fetch stops at its next chunk, a waiting send returns.
    func close() {
        closed.withLock { $0 = true }
        channel.finish()
    }
}
