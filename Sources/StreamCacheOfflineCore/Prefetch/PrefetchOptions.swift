import Foundation
import StreamCache

/// What a prefetch fetches: what a player needs to play the first seconds of each item with the
/// network off.
public struct PrefetchOptions: Sendable {
    /// The seconds of each item to make playable from the cache.
    public var seconds: Double = 5
    /// The variant a manifest's player starts with: the first listed (`nil`, as AVPlayer
    /// starts), or the best at or below this many bits per second.
    public var maxBitrate: Int64?
    /// Items fetched at once, each on one connection at a time.
    public var jobs = 4
    /// Request headers for the origin (per host), as the streaming cache sends them.
    public var headers = OriginHeaders()

    /// The most items one prefetch takes.
    public static let maximumItems = 10_000
    /// The most seconds one item may ask for: a day.
    public static let maximumSeconds = 86_400.0

    public init() {}
}

/// How the prefetch of one item went.
public struct PrefetchOutcome: Sendable {
    /// The item's URL, as given.
    public let url: URL
    /// What the item is: `manifest` (its start variant's files), `mp4` or `mp3`.
    public let kind: String
    /// The files or byte ranges read through the cache.
    public let reads: Int
    /// The bytes those reads hold (from the cache or the origin).
    public let bytes: Int64
    /// Why the item was not prefetched; `nil` when it was.
    public let failure: String?
    /// The error behind ``failure``.
    public let error: (any Error)?

    package init(url: URL, kind: String, reads: Int, bytes: Int64, error: (any Error)?) {
        self.url = url
        self.kind = kind
        self.reads = reads
        self.bytes = bytes
        self.failure = error.map(ItemFetcher.reason(for:))
        self.error = error
    }
}
