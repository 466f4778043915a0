import Foundation

extension CacheEngine {
    /// What ``applyKeyRules()`` did.
    package struct Rekeying: Sendable, Equatable {
        /// Resources now stored under another key.
        package var moved = 0
        /// Resources removed because another of the same key now holds more of its bytes.
        package var merged = 0
    }

    /// Stores every resource under the key the engine's rules give the URL it was last opened
    /// with, so that rules apply to what was stored before them: a resource cached as
    /// `ep.mp3?token=a` before `--key-ignore-query token` is `ep.mp3`'s, and a rule removed
    /// gives each its full URL back.
    ///
    /// Where several resources come to one key, the one holding the most bytes (a pinned one
    /// first) stays and the others go: one key, one copy. Each remembers the digest of the
    /// left-out parameter values it came with (``CacheConfiguration/tokenDigest(_:)``), so a
    /// read with other values proves its bytes first; a rule never merges content.
    ///
    /// Made for an engine with no reads open (`streamcache config`); another process's open
    /// reads of a moved resource go on from their file, and a removed one's file is unlinked
    /// under them as `rm` does.
    ///
    /// - Throws: ``StreamCacheError`` if the index cannot be read or written.
    package func applyKeyRules() async throws -> Rekeying {
        var groups: [String: [(record: ResourceRecord, cached: Int64)]] = [:]
        for (record, ranges) in try await index.allResources() {
            guard let url = URL(string: record.url) else { continue }
            groups[configuration.cacheKey(url), default: []].append((record, ranges.count))
        }
        var outcome = Rekeying()
        var losers: [ResourceRecord] = []
        var changes: [(id: Int64, key: String, tokenDigest: String?)] = []
        for (key, members) in groups {
            let keeper = members.max { a, b in
                (a.record.pinned ? 1 : 0, a.cached, a.record.lastAccess)
                    < (b.record.pinned ? 1 : 0, b.cached, b.record.lastAccess)
            }!.record
            losers += members.map(\.record).filter { $0.id != keeper.id }
            let digest = URL(string: keeper.url).flatMap(configuration.tokenDigest)
            if keeper.key != key || keeper.tokenDigest != digest {
                changes.append((keeper.id, key, digest))
                if keeper.key != key { outcome.moved += 1 }
            }
        }
        for record in losers {
            unlink(directory.dataPath(id: record.id))
            try await index.delete(id: record.id)
        }
        outcome.merged = losers.count
        try await index.setKeys(changes)
        return outcome
    }
}
