import Foundation
import Logging

/// What every resource session of one engine shares: the cache directory and its index, how to
/// reach origins, the configuration, the logger, and what servers may send without a read.
struct SessionEnvironment: Sendable {
    let configuration: CacheConfiguration
    let index: CacheIndex
    let directory: CacheDirectory
    let origin: RedirectingOrigin
    let logger: Logger
    let published = PublishedFiles()
    /// What each origin this engine met did with a request for a range.
    let originRanges = OriginRangeSupport()
    /// The free space data writes leave on the cache's filesystem.
    let reserve: DiskReserve
    /// The mark of this engine in the directory, held while it runs.
    let mark: ProcessMark
    /// When resources were opened, until the engine writes it to the index.
    let accessTimes: AccessTimes
    /// The byte budget: the configuration's, until the engine is given another.
    let budget: Locked<Int64>
    /// How this engine's fetches claim bytes and judge other engines' claims.
    var claimRules: CacheIndex.ClaimRules {
        CacheIndex.ClaimRules(
            owner: mark.token,
            isAlive: { [folder = directory.ownersDirectory] in ProcessMark.isAlive($0, in: folder) },
            staleAfter: configuration.claimStaleAfter
        )
    }
}
