import Foundation

/// Bytes only a prefetch brought: a prefetch marks what it cached (``CacheIndex/markPrefetched(key:at:)``),
/// a player's open clears the mark, eviction takes marked resources before any other, and they
/// never hold more than ``CacheConfiguration/prefetchShare`` of the budget.
extension CacheEngine {
    /// Whether `url`'s cached bytes, if it has any, came only from prefetches (asked before a
    /// prefetch opens it: its own open does not count as a play).
    package func holdsPrefetchedOnly(_ url: URL) async -> Bool {
        (try? await index.holdsPrefetchedOnly(key: configuration.cacheKey(url))) ?? false
    }

    /// Marks `url`'s cached bytes as brought by a prefetch, never played.
    package func markPrefetched(_ url: URL) async {
        try? await index.markPrefetched(key: configuration.cacheKey(url), at: Date().timeIntervalSince1970)
    }

    /// Evicts resources holding bytes only a prefetch brought, the earliest prefetched first,
    /// until they hold at most `limit` bytes. A resource a reader holds stays; one whose session
    /// is still finishing (making its last bytes durable) is waited for, at most 2 s.
    package func evictPrefetched(beyond limit: Int64) async {
        // Opens not yet recorded may have played some of them.
        await writeAccessTimes()
        var pause = Duration.milliseconds(25)
        let deadline = ContinuousClock.now.advanced(by: .seconds(2))
        while true {
            guard let records = try? await index.prefetchedResources() else { return }
            var total = records.reduce(Int64(0)) { $0 + $1.cachedBytes }
            guard total > limit else { return }
            // Sessions lingering unused (the prefetch's own, just read) hold their files: close
            // them so they can go too.
            for key in sessions.unleasedKeys {
                sessions.stopLingering(key)
                _ = await closeIfIdle(key)
            }
            let inUse = await resourcesInUse()
            var waiting = false
            for record in records where total > limit {
                if inUse.contains(record.id) {
                    waiting = true
                } else if (try? await remove(record, keeping: 0)) == true {
                    total -= record.cachedBytes
                }
            }
            guard total > limit, waiting, ContinuousClock.now < deadline else { return }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(200))
        }
    }
}
