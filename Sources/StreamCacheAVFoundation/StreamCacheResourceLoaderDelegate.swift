#if canImport(AVFoundation) && !os(watchOS)
import AVFoundation
import StreamCache
import StreamCacheResourceLoader

/// The `AVAssetResourceLoaderDelegate` of assets whose bytes come from StreamCache: each call is
/// handed to a ``ResourceLoaderEngine``, which does all the work on its serial queue.
///
/// Set it on an asset with `asset.resourceLoader.setDelegate(delegate, queue: delegate.queue)`,
/// or let ``StreamCacheAssets`` do it. AVFoundation holds the delegate weakly: keep it alive.
public final class StreamCacheResourceLoaderDelegate: NSObject, AVAssetResourceLoaderDelegate, @unchecked Sendable {
    // Immutable after init; the engine is thread-safe.
    public let loader: ResourceLoaderEngine

    /// The queue to give `setDelegate(_:queue:)`: the one every callback runs on.
    public var queue: DispatchQueue { loader.queue }

    public init(engine: CacheEngine) {
        loader = ResourceLoaderEngine(engine: engine)
    }

    public func resourceLoader(
        _ resourceLoader: AVAssetResourceLoader,
        shouldWaitForLoadingOfRequestedResource loadingRequest: AVAssetResourceLoadingRequest
    ) -> Bool {
        loader.shouldWaitForLoading(loadingRequest)
    }

    public func resourceLoader(
        _ resourceLoader: AVAssetResourceLoader,
        didCancel loadingRequest: AVAssetResourceLoadingRequest
    ) {
        loader.didCancel(loadingRequest)
    }
}
#endif
