/// One origin transfer that a ``ResourceSession`` runs to fill a gap.
///
/// Bytes land at `frontier` and move it forward; the fetch stops at its limit, which shrinks
/// when cached bytes or another fetch lie ahead (no byte is fetched twice).
struct Fetch: Sendable {
    /// Identifies the fetch inside its session.
    let id: Int
    /// The version of the resource the fetch writes (see ``ResourceSession`` generations).
    var generation: Int
    /// The first byte asked for.
    let start: Int64
    /// The next byte the fetch will write.
    var frontier: Int64
    /// The end asked of the origin (exclusive), or `nil` for "to the end of the resource".
    let requestedEnd: Int64?
    /// When the fetch started (to judge its rate).
    let startedAt = ContinuousClock.now
    /// The task running the transfer.
    var task: Task<Void, Never>? = nil
}

/// How a fetch goes on after writing bytes.
enum FetchProgress: Sendable {
    /// Readers want its bytes: write up to `limit`.
    case proceed(limit: Int64)
    /// No reader wants its bytes any more: finish the bounded request it is in (up to `limit`),
    /// then stop.
    case finishRequest(limit: Int64)
    /// Stop now: the fetch belongs to a replaced version.
    case stop
}

/// What a reader of a ``ResourceSession`` is doing.
struct ReaderState: Sendable {
    /// The first byte the reader asked for.
    let start: Int64
    /// The next byte the reader needs.
    var position: Int64
    /// The end of the read (exclusive), or `nil` for "to the end of the resource".
    let end: Int64?
    /// The fetch it waits on, if any.
    var waitingOn: Int?
    /// An error to hand the reader when it wakes.
    var error: StreamCacheError?
    /// The bytes that were cached when the reader came; the others it gets arrive from the origin.
    var cachedAtStart: RangeSet

    /// Whether the reader has already received bytes.
    var hasDelivered: Bool { position > start }
}

/// The next thing a reader gets from its session.
enum Span: Sendable {
    /// Bytes `range` are in `file`, ready to read; `fromOrigin` if they arrived from the origin
    /// after the reader came, rather than being cached already.
    case bytes(ByteRange, CacheFile, fromOrigin: Bool)
    /// The read is complete.
    case end
}
