import AsyncAlgorithms

/// The rest of a read straight from the origin, written nowhere (see
/// ``ResourceSession/uncached(from:end:known:)``), at its reader's pace: the fetch hands over one
/// chunk at a time and waits until the reader has taken it, so a slow reader slows the origin's
/// read (through the HTTP client's own flow control) instead of filling memory.
///
/// The sequence owns the fetch: once its iterator is gone, the fetch is cancelled.
struct PassThrough: AsyncSequence, Sendable {
    typealias Element = [UInt8]

    private let channel: AsyncThrowingChannel<[UInt8], any Error>
    private let fetch: FetchOwner

    /// Runs `produce`, which sends the chunks; its end or its error ends the sequence.
    init(_ produce: @escaping @Sendable (_ send: @Sendable ([UInt8]) async -> Void) async throws -> Void) {
        let output = AsyncThrowingChannel<[UInt8], any Error>()
        channel = output
        fetch = FetchOwner(
            Task {
                do {
                    try await produce { chunk in await output.send(chunk) }
                    output.finish()
                } catch {
                    output.fail(error)
                }
            }
        )
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: channel.makeAsyncIterator(), fetch: fetch)
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingChannel<[UInt8], any Error>.Iterator
        /// Keeps the fetch alive as long as the iterator is.
        let fetch: FetchOwner

        mutating func next() async throws -> [UInt8]? {
            try await base.next()
        }
    }

    /// Cancels the fetch when the last holder lets it go.
    final class FetchOwner: Sendable {
        private let task: Task<Void, Never>

        init(_ task: Task<Void, Never>) {
            self.task = task
        }

        deinit {
            task.cancel()
        }
    }
}
