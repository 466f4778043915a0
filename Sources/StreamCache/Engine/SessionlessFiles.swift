import Foundation

/// The resources a server answered from the index (``CacheEngine/sessionlessFile(key:)``) in the last
/// second, kept open: a player that reads one resource range after range (a seek, a 4 KiB read
/// at a time) pays the index read, the open and the lock once, not per range.
///
/// An entry is dropped once it has gone ``idleLimit`` unused, when its file stops being the
/// cache's (another process replaced or removed the resource) or changes (a write, or something
/// behind the cache's back: a session reads it against its checksums), and when its version is
/// no longer fresh. The entries live in two generations: new and used ones go to `recent`, and
/// when ``capacity`` are there, they become `older` and the older ones are closed, so at most
/// twice ``capacity`` descriptors stay open and a resource nobody reads is soon free to be
/// evicted. (Sorting the entries by last use to drop the oldest, or dropping the oldest one at
/// each keep, costs a server time on every first touch of a segment, each a new entry.)
final class SessionlessFiles: Sendable {
    private struct Entry {
        let resource: ServableFile
        let id: Int64
        /// The file as the index saw it when it was opened.
        let seen: DataFileState
        var lastUsed: ContinuousClock.Instant
    }

    static let idleLimit: Duration = .seconds(1)
    static let capacity = 32

    private struct Generations {
        var recent: [String: Entry] = [:]
        var older: [String: Entry] = [:]
        var pruning: Task<Void, Never>?

        /// Puts `entry` in the recent generation, which becomes the older one once full.
        ///
        /// - Returns: the entries let go, for the caller to release outside the lock.
        mutating func insert(_ entry: Entry, for key: String) -> [String: Entry] {
            recent[key] = entry
            guard recent.count >= SessionlessFiles.capacity else { return [:] }
            defer { (older, recent) = (recent, [:]) }
            return older
        }
    }

    private let generations = Locked(Generations())

    /// The kept resource of `key` and its row id, if it is still the cache's, as it was, and fresh.
    ///
    /// The file's state is read outside the lock, so the event loops that answer ranges of one
    /// resource at once do not wait on each other's `fstat`.
    func take(_ key: String, now: ContinuousClock.Instant = .now) -> (ServableFile, id: Int64)? {
        var closed: [String: Entry] = [:]
        let kept = generations.withLock { generations -> Entry? in
            // One search of the key (a URL's length): this runs for every range read this way.
            if let index = generations.recent.index(forKey: key) {
                generations.recent.values[index].lastUsed = now
                return generations.recent.values[index]
            }
            guard var entry = generations.older.removeValue(forKey: key) else { return nil }
            entry.lastUsed = now
            closed = generations.insert(entry, for: key)
            return entry
        }
        withExtendedLifetime(closed) {}
        guard let kept else { return nil }
        guard now < kept.resource.freshUntil, let status = kept.resource.file.status(), !status.isUnlinked,
            status.state == kept.seen
        else {
            generations.withLock { generations in
                // Unless another read kept a newer one meanwhile.
                if generations.recent[key]?.resource.file === kept.resource.file { generations.recent[key] = nil }
                if generations.older[key]?.resource.file === kept.resource.file { generations.older[key] = nil }
            }
            return nil
        }
        return (kept.resource, kept.id)
    }

    /// Keeps `resource` (row `id`, its file as `seen`) of `key` open for the next reads.
    func keep(
        _ resource: ServableFile,
        id: Int64,
        seen: DataFileState,
        for key: String,
        now: ContinuousClock.Instant = .now
    ) {
        let closed = generations.withLock { generations in
            generations.older[key] = nil
            let closed = generations.insert(Entry(resource: resource, id: id, seen: seen, lastUsed: now), for: key)
            if generations.pruning == nil {
                // Owned by this object: ends by itself once nothing is kept.
                generations.pruning = Task { [weak self] in
                    while let self, await self.pruneAfterAWhile() {}
                }
            }
            return closed
        }
        // The files of the generation let go are closed here, outside the lock.
        withExtendedLifetime(closed) {}
    }

    /// Closes the kept file of `key`, if there is one.
    func remove(_ key: String) {
        let closed = generations.withLock { generations in
            (generations.recent.removeValue(forKey: key), generations.older.removeValue(forKey: key))
        }
        withExtendedLifetime(closed) {}
    }

    /// Closes every kept file.
    func removeAll() {
        let closed = generations.withLock { generations in
            defer { (generations.recent, generations.older) = ([:], [:]) }
            return (generations.recent, generations.older)
        }
        withExtendedLifetime(closed) {}
    }

    /// Waits ``idleLimit``, then drops the entries unused since.
    ///
    /// - Returns: whether any are left to prune later.
    private func pruneAfterAWhile() async -> Bool {
        try? await Task.sleep(for: Self.idleLimit)
        let now = ContinuousClock.now
        return generations.withLock { generations in
            generations.recent = generations.recent.filter { now - $0.value.lastUsed < Self.idleLimit }
            generations.older = generations.older.filter { now - $0.value.lastUsed < Self.idleLimit }
            if generations.recent.isEmpty && generations.older.isEmpty { generations.pruning = nil }
            return generations.pruning != nil
        }
    }
}
