import Foundation

/// What a user removes or keeps: resources by URL or key, pins, the whole cache.
extension CacheEngine {
    /// Deletes the cached bytes and index entry of `url`, even while it is read (readers keep
    /// their open file; nothing they fetch afterwards is recorded).
    ///
    /// - Returns: whether the cache held it.
    @discardableResult
    public func remove(_ url: URL) async throws -> Bool {
        try await remove(keys: [configuration.cacheKey(url)]) > 0
    }

    /// Deletes the cached bytes and index entries of the resources stored under `keys` (as
    /// ``remove(_:)`` does each).
    ///
    /// - Returns: how many the cache held.
    @discardableResult
    package func remove(keys: Set<String>) async throws -> Int {
        var records: [ResourceRecord] = []
        for key in keys {
            if let record = try await index.resource(forKey: key) { records.append(record) }
        }
        try await delete(records)
        return records.count
    }

    /// Deletes the data files of `records`, then their rows: every file before any row, so space
    /// is freed even when the disk is too full for the index to change (a row whose file is gone
    /// is dropped when it is next opened: the ranges past a file's end are), also when the first
    /// record has no file (a full disk refused its bytes).
    ///
    /// A file another process holds open (a server's reader) keeps its blocks when unlinked: on
    /// a disk with less free than the reserve the index needs, each file is emptied before it is
    /// unlinked, so the space comes back at once (its readers see a file cut short, and fetch
    /// again); otherwise they read on.
    func delete(_ records: [ResourceRecord]) async throws {
        let free = DiskReserve.freeBytes(at: directory.dataDirectory) ?? .max
        let emptying = free < configuration.diskReserve
        for record in records {
            let path = directory.dataPath(id: record.id)
            if emptying { CacheFile.empty(at: path) }
            unlink(path)
        }
        for record in records { try await index.delete(id: record.id) }
    }

    /// Pins (or unpins) `url`: a pinned resource is never evicted.
    ///
    /// - Returns: whether the cache holds it.
    @discardableResult
    public func setPinned(_ pinned: Bool, _ url: URL) async throws -> Bool {
        guard let record = try await index.resource(forKey: configuration.cacheKey(url)) else { return false }
        try await index.setPinned(pinned, id: record.id)
        return true
    }

    /// Deletes every resource in the cache.
    ///
    /// - Returns: how many resources were removed.
    @discardableResult
    public func removeAll() async throws -> Int {
        let all = try await index.allResources()
        try await delete(all.map { $0.0 })
        return all.count
    }
}
