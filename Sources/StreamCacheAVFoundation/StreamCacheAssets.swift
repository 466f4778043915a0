#if canImport(AVFoundation)
import AVFoundation
import StreamCache
import StreamCacheResourceLoader

/// Ready-to-play assets whose bytes go through the cache: one call per episode.
///
/// ```swift
/// let assets = StreamCacheAssets(engine: engine)   // keep it for the app's lifetime
/// player.replaceCurrentItem(with: assets.playerItem(for: episodeURL))
/// ```
public final class StreamCacheAssets: @unchecked Sendable {
    // Immutable after init.
    public let engine: CacheEngine
    public let delegate: StreamCacheResourceLoaderDelegate

    public init(engine: CacheEngine) {
        self.engine = engine
        self.delegate = StreamCacheResourceLoaderDelegate(engine: engine)
    }

    /// An asset for `url` that streams through the cache; for a URL that is not http(s), a plain
    /// asset (AVFoundation loads it itself).
    public func asset(for url: URL) -> AVURLAsset {
        guard let custom = CustomSchemeURL.wrapping(url) else { return AVURLAsset(url: url) }
        let asset = AVURLAsset(url: custom)
        asset.resourceLoader.setDelegate(delegate, queue: delegate.queue)
        return asset
    }

    /// A player item for `url` that streams through the cache. On the main actor, where an app
    /// makes its player items (newer SDKs isolate `AVPlayerItem` there).
    @MainActor
    public func playerItem(for url: URL) -> AVPlayerItem {
        AVPlayerItem(asset: asset(for: url))
    }

    /// Fetches the first `bytes` of `url` into the cache, so the next episode starts at once.
    public func preload(_ url: URL, bytes: Int64 = 2 << 20) async throws {
        for try await _ in try await engine.read(url, offset: 0, length: bytes) {}
    }
}
#endif
