import Foundation
import Logging

/// Keeping the cache within its budget: room made on a full disk, eviction passes of the
/// least recently used resources, and the resources in use that they leave alone.
extension CacheEngine {
    /// Makes room on a full disk, for failed writes at most once every 5 seconds, for a resource
    /// that cannot be opened (`now`) at once.
    ///
    /// Bytes the index never recorded go first. Then least recently used resources (not in use,
    /// not pinned) go: half of what the cache holds, so that it takes new bytes for a while, and
    /// more if the disk needs more to have the write reserve free and one check interval more.
    /// If the whole cache could not free that (something else filled the disk), emptying it
    /// would not let it keep anything new: only a resource that cannot be opened frees room, as
    /// much as an index row needs.
    func makeRoom(now: Bool = false) async {
        if !now, let last = lastMadeRoom, last.duration(to: .now) < .seconds(5) { return }
        lastMadeRoom = .now
        // Sessions lingering unused hold their files: close them so they can go too.
        for key in sessions.unleasedKeys {
            sessions.stopLingering(key)
            _ = await closeIfIdle(key)
        }
        // Bytes the index never recorded (the disk filled first) count on disk, not in the index.
        let freed = await UnrecordedBytes.reclaim(in: directory, index: index)
        if freed > 0 {
            logger.warning(
                "the cache's disk is full; freed bytes that were never recorded",
                metadata: ["freed": "\(freed)"]
            )
        }
        guard let total = try? await index.totalCachedBytes(), total > 0 else { return }
        let free = DiskReserve.freeBytes(at: directory.dataDirectory) ?? 0
        let short = environment.reserve.reserve + DiskReserve.checkInterval - free
        guard short > 0 else { return }
        let evicted: Int64
        if short <= total {
            evicted = max(short, total / 2)
        } else if now {
            evicted = min(total, Self.indexRoom)
        } else {
            logger.warning(
                "the cache's disk is full, and not with the cache's bytes: new bytes go on uncached",
                metadata: ["cached": "\(total)", "free": "\(free)"]
            )
            return
        }
        logger.warning(
            "the cache's disk is full; evicting to make room",
            metadata: ["cached": "\(total)", "evicting": "\(evicted)"]
        )
        await evict(downTo: total - evicted)
    }

    /// What a resource that cannot be opened on a disk filled by others frees: room for its index
    /// row and the index's log.
    static let indexRoom: Int64 = 256 << 10

    /// Removes least recently used resources until the cache fits its budget.
    ///
    /// Resources open in this or another process, and pinned ones, are kept. A resource that is
    /// alone over the budget is cut down to the budget (its first bytes are kept).
    public func evictIfNeeded() async {
        await evict(downTo: budget)
    }

    /// Removes least recently used resources until the cache holds at most `budget` bytes.
    func evict(downTo budget: Int64) async {
        // One pass at a time; a caller arriving during a pass runs another after it.
        let previous = eviction
        // Awaited by this caller, and by the next pass, which starts after it.
        let pass = Task {
            await previous?.value
            await self.evictionPass(budget: budget)
        }
        eviction = pass
        await pass.value
    }

    func evictionPass(budget: Int64) async {
        do {
            var total = try await index.totalCachedBytes()
            guard total > budget else { return }
            // What this engine read last must not look least recently used.
            await writeAccessTimes()
            let inUse = await resourcesInUse()
            let all = try await index.evictionCandidates()
            let candidates = all.filter { !inUse.contains($0.id) }
            // A resource in use counts as used after every closed one it was opened after.
            let newestInUse = all.filter { inUse.contains($0.id) }.map(\.lastAccess).max()
            for (position, candidate) in candidates.enumerated() where total > budget {
                // Whole resources, least recently used first; only the most recently used of
                // all, if it alone is over the budget, is cut down instead of removed.
                let isMostRecent =
                    position == candidates.count - 1 && newestInUse.map { candidate.lastAccess > $0 } ?? true
                let rest = total - candidate.cachedBytes
                let keep = isMostRecent && rest < budget ? budget - rest : 0
                if try await remove(candidate, keeping: keep) {
                    total = rest + keep
                }
            }
        } catch {
            logger.warning("eviction failed", metadata: ["error": "\(error)"])
        }
    }

    /// Ids of the resources this engine has open sessions on.
    func resourcesInUse() async -> Set<Int64> {
        var ids = Set<Int64>()
        for (_, session) in sessions.openSessions { ids.insert(await session.record.id) }
        return ids
    }

    /// Removes `record`, or cuts it to its first `keep` cached bytes, unless some process has it open.
    ///
    /// - Returns: whether it was removed or cut.
    func remove(_ record: ResourceRecord, keeping keep: Int64) async throws -> Bool {
        let path = directory.dataPath(id: record.id)
        let index = index
        let done = try await CacheFile.withExclusiveLock(path: path) { descriptor in
            // A file an offline package shares keeps its bytes: the cache only drops its name.
            if keep <= 0 || descriptor.map(SharedFiles.isShared) == true {
                // Emptied through the locked descriptor first, so the space is free at once,
                // even for the index's own write on a full disk.
                if let descriptor { SharedFiles.cut(descriptor, to: 0) }
                unlink(path)
                try await index.delete(id: record.id)
                return
            }
            var kept = ByteRangeSet()
            var budget = keep
            for range in try await index.ranges(of: record.id).ranges where budget > 0 {
                let take = min(range.count, budget)
                kept.insert(ByteRange(range.lowerBound, range.lowerBound + take))
                budget -= take
            }
            // The file first (space is freed for the index's write on a full disk): ranges the
            // index still holds past the file's end are dropped when the file is next opened.
            // Through the locked descriptor: opening the file again would wait for our own lock.
            if let descriptor, !SharedFiles.cut(descriptor, to: kept.ranges.last?.upperBound ?? 0) {
                throw StreamCacheError.storage("cannot truncate", path: path, errno: errno)
            }
            try await index.setRanges(kept, of: record.id)
        }
        if done { logger.debug("evicted", metadata: ["url": "\(record.url)", "kept": "\(keep)"]) }
        return done
    }
}
