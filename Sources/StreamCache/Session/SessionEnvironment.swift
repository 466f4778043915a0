import Logging

/// What every resource session of one engine shares: the cache directory and its index, how to
/// reach origins, the configuration, the logger, and what servers may send without a read.
struct SessionEnvironment: Sendable {
    let configuration: CacheConfiguration
    let index: CacheIndex
    let directory: CacheDirectory
    let origin: RedirectingOrigin
    let logger: Logger
    let warm = WarmResources()
}
