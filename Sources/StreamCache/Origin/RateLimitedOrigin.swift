import Foundation

/// An origin client whose bodies, all requests together, arrive no faster than a rate: curl's
/// `--limit-rate`. Each chunk is handed on when the bytes before it are due at that rate; as a
/// body is pulled chunk by chunk, the origin sends no faster either (once the socket's buffers
/// are full).
public struct RateLimitedOrigin: OriginClient {
    private let inner: any OriginClient
    private let pace: TransferPace

    /// `inner`, its bodies limited to `bytesPerSecond` in all (at least 1).
    public init(_ inner: any OriginClient, bytesPerSecond: Int64) {
        self.inner = inner
        pace = TransferPace(bytesPerSecond: max(1, bytesPerSecond))
    }

    public func fetch<Result: Sendable>(
        _ request: OriginRequest,
        _ handle: @Sendable (OriginResponseHead, OriginBody) async throws -> Result
    ) async throws -> Result {
        try await inner.fetch(request) { [pace] head, body in
            let paced = OriginBody {
                // The body's iterator keeps no state of its own: a new one reads on.
                var iterator = body.makeAsyncIterator()
                let chunk = try await iterator.next()
                if let chunk { try await Task.sleep(for: pace.delay(for: chunk.count)) }
                return chunk
            }
            return try await handle(head, paced)
        }
    }
}

/// When the bytes taken so far are due at a rate: each take reserves its share of time after
/// the takes before it. Time left unused while nothing was taken is credited for at most 100 ms,
/// so a pause is not made up by a burst.
final class TransferPace: Sendable {
    private let bytesPerSecond: Int64
    private let due = Locked<ContinuousClock.Instant?>(nil)

    init(bytesPerSecond: Int64) {
        self.bytesPerSecond = bytesPerSecond
    }

    /// How long to wait before handing on `count` more bytes.
    func delay(for count: Int) -> Duration {
        let now = ContinuousClock.now
        let share = Duration.nanoseconds(Int64((Double(count) / Double(bytesPerSecond) * 1e9).rounded()))
        return due.withLock { due in
            let start = max(due ?? now, now - .milliseconds(100))
            due = start + share
            return max(.zero, start + share - now)
        }
    }
}
