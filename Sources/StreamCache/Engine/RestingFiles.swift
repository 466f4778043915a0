import Foundation

/// The resources a server answered from the index (``CacheEngine/resting(key:)``) in the last
/// second, kept open: a player that reads one resource range after range (a seek, a 4 KiB read
/// at a time) pays the index read, the open and the lock once, not per range.
///
/// An entry is dropped once it has gone ``idleLimit`` unused, when its file stops being the
/// cache's (another process replaced or removed the resource) or changes (a write, or something
/// behind the cache's back: a session reads it against its checksums), when its version is no
/// longer fresh, and once more than twice ``capacity`` are kept, all but the ``capacity`` last
/// used go at once, so a few descriptors stay open at most and a resource nobody reads is soon
/// free to be evicted. (Dropping the oldest one at each keep scanned and copied every entry for
/// each first touch of a segment: 6% of the event loop's time.)
final class RestingFiles: @unchecked Sendable {
    private struct Entry {
        let resource: WarmResource
        let id: Int64
        /// The file as the index saw it when it was opened.
        let seen: DataFileState
        var lastUsed: ContinuousClock.Instant
    }

    static let idleLimit: Duration = .seconds(1)
    static let capacity = 32

    // `entries` and `pruning` are guarded by `lock`.
    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    private var pruning: Task<Void, Never>?

    /// The kept resource of `key` and its row id, if it is still the cache's, as it was, and fresh.
    ///
    /// The file's state is read outside the lock, so the event loops that answer ranges of one
    /// resource at once do not wait on each other's `fstat`.
    func take(_ key: String, now: ContinuousClock.Instant = .now) -> (WarmResource, id: Int64)? {
        let kept = lock.withLock { () -> Entry? in
            entries[key]?.lastUsed = now
            return entries[key]
        }
        guard let kept else { return nil }
        guard now < kept.resource.freshUntil, let status = kept.resource.file.status(), !status.isUnlinked,
            status.state == kept.seen
        else {
            lock.withLock {
                // Unless another read kept a newer one meanwhile.
                if entries[key]?.resource.file === kept.resource.file { entries[key] = nil }
            }
            return nil
        }
        return (kept.resource, kept.id)
    }

    /// Keeps `resource` (row `id`, its file as `seen`) of `key` open for the next reads.
    func keep(
        _ resource: WarmResource,
        id: Int64,
        seen: DataFileState,
        for key: String,
        now: ContinuousClock.Instant = .now
    ) {
        lock.withLock {
            entries[key] = Entry(resource: resource, id: id, seen: seen, lastUsed: now)
            if entries.count > 2 * Self.capacity {
                let kept = entries.values.map { $0.lastUsed }.sorted(by: >)[Self.capacity - 1]
                entries = entries.filter { $0.value.lastUsed >= kept }
            }
            if pruning == nil {
                // Owned by this object: ends by itself once nothing is kept.
                pruning = Task { [weak self] in
                    while let self, await self.pruneAfterAWhile() {}
                }
            }
        }
    }

    /// Closes every kept file.
    func removeAll() {
        lock.withLock { entries = [:] }
    }

    /// Waits ``idleLimit``, then drops the entries unused since.
    ///
    /// - Returns: whether any are left to prune later.
    private func pruneAfterAWhile() async -> Bool {
        try? await Task.sleep(for: Self.idleLimit)
        let now = ContinuousClock.now
        return lock.withLock {
            entries = entries.filter { now - $0.value.lastUsed < Self.idleLimit }
            if entries.isEmpty { pruning = nil }
            return !entries.isEmpty
        }
    }
}
