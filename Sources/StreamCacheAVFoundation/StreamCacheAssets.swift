// AVAssetResourceLoader is unavailable on watchOS, where AVFoundation exists without it.
#if canImport(AVFoundation) && !os(watchOS)
import AVFoundation
import StreamCache
import StreamCacheOffline
import StreamCacheResourceLoader
import StreamCacheServer

/// Ready-to-play assets whose bytes go through the cache: one call per episode, whatever it is.
///
/// Progressive media (MP3, M4A, MP4) goes through the resource loader; HLS (by the URL, the type
/// the app passes, or the one the cache recorded) through the in-app server, because AVPlayer
/// loads media segments over HTTP only; offline packages through the in-app server too, with
/// or without the origin (``PlaybackRouter``).
///
/// ```swift
/// let assets = StreamCacheAssets(engine: engine)   // keep it for the app's lifetime
/// player.automaticallyWaitsToMinimizeStalling = false
/// player.replaceCurrentItem(with: try await assets.playerItem(for: episodeURL))
/// ```
public final class StreamCacheAssets: @unchecked Sendable {
    // Immutable after init; every member is thread-safe.
    public let engine: CacheEngine
    public let delegate: StreamCacheResourceLoaderDelegate
    /// The loopback server HLS and offline packages play through, started when first needed.
    public let server: InAppServer
    private let router: PlaybackRouter
    /// The library whose formats read manifests for a prefetch.
    private let library: OfflineLibrary

    /// - Parameters:
    ///   - engine: the app's engine.
    ///   - offlineLibrary: the library offline packages are played from (default: the cache
    ///     directory's `packages` folder; apps usually pass ``OfflineLibrary/userDefault(cache:environment:platformSupport:)``).
    public init(engine: CacheEngine, offlineLibrary: OfflineLibrary? = nil) {
        self.engine = engine
        self.delegate = StreamCacheResourceLoaderDelegate(engine: engine)
        self.server = InAppServer(engine: engine, offlineLibrary: offlineLibrary)
        self.router = PlaybackRouter(server: server)
        self.library = offlineLibrary ?? OfflineLibrary(cache: engine.directory)
    }

    /// How `url` will play (starts the in-app server if it is HLS).
    ///
    /// - Parameter contentType: the media type the app knows (an RSS enclosure's `type`), for an
    ///   HLS URL that does not end in `.m3u8`.
    public func route(for url: URL, contentType: String? = nil) async throws -> PlaybackRoute {
        try await router.route(url, contentType: contentType)
    }

    /// The asset for a route.
    public func asset(for route: PlaybackRoute) -> AVURLAsset {
        switch route {
        case .resourceLoader(let origin):
            guard let custom = CustomSchemeURL.wrapping(origin) else { return AVURLAsset(url: origin) }
            let asset = AVURLAsset(url: custom)
            asset.resourceLoader.setDelegate(delegate, queue: delegate.queue)
            return asset
        case .server(let url), .direct(let url):
            return AVURLAsset(url: url)
        }
    }

    /// A player item for `url` that streams through the cache. On the main actor, where an app
    /// makes its player items (newer SDKs isolate `AVPlayerItem` there).
    ///
    /// - Throws: if `url` is HLS and the in-app server cannot start.
    @MainActor
    public func playerItem(for url: URL, contentType: String? = nil) async throws -> AVPlayerItem {
        let route = try await self.route(for: url, contentType: contentType)
        return AVPlayerItem(asset: asset(for: route))
    }

    /// A player item for the offline package `id`: it plays with the network off once the
    /// package is complete, and while it downloads.
    ///
    /// - Throws: if the in-app server cannot start.
    @MainActor
    public func offlinePlayerItem(id: String) async throws -> AVPlayerItem {
        let route = try await router.route(offlinePackage: id)
        return AVPlayerItem(asset: asset(for: route))
    }

    /// Fetches the first `bytes` of `url` into the cache, so the next episode starts at once.
    public func preload(_ url: URL, bytes: Int64 = 2 << 20) async throws {
        for try await _ in try await engine.read(url, offset: 0, length: bytes) {}
    }

    /// Caches what AVPlayer needs to start each of `urls` at once, their first `seconds`: an
    /// HLS stream's playlists, keys, init sections and first segments; a progressive file's
    /// movie box and first samples, or first MP3 frames (``CacheEngine/prefetch(_:options:library:finished:)``).
    /// Items are fetched in order; cancelling the calling task stops the rest.
    @discardableResult
    public func prefetch(_ urls: [URL], seconds: Double = 5) async -> [PrefetchOutcome] {
        var options = PrefetchOptions()
        options.seconds = seconds
        return await engine.prefetch(urls, options: options, library: library)
    }
}
#endif
