import Foundation
import Logging

/// The cache: answers byte-range reads of remote resources from disk where it can and from the
/// origin where it must, writing down what it fetches so each byte is downloaded once.
///
/// One engine per cache directory per process; several processes may share a directory.
public actor CacheEngine {
    /// What the engine and its resource sessions share.
    private nonisolated let environment: SessionEnvironment
    /// The directory the engine works in.
    public nonisolated var directory: CacheDirectory { environment.directory }
    /// The index of the directory.
    public nonisolated var index: CacheIndex { environment.index }
    /// The engine's configuration.
    public nonisolated var configuration: CacheConfiguration { environment.configuration }
    private nonisolated var logger: Logger { environment.logger }

    private enum Entry {
        case opening(Task<ResourceSession, Error>)
        case open(ResourceSession)
    }
    private var sessions: [String: Entry] = [:]
    private var leases: [String: Int] = [:]
    private var validatedAt: [String: ContinuousClock.Instant] = [:]
    /// When the last lease of a key was released, for keys whose session lingers open.
    private var releasedAt: [String: ContinuousClock.Instant] = [:]
    private var eviction: Task<Void, Never>?

    /// Opens the cache in `directory`, creating it if needed.
    ///
    /// - Parameters:
    ///   - directory: where `index.sqlite` and the data files live.
    ///   - origin: how to reach origins (``HTTPOriginClient`` on servers, ``URLSessionOriginClient`` in apps).
    ///   - configuration: budget and tuning.
    ///   - logger: where the engine logs; it never bootstraps logging itself.
    /// - Throws: ``StreamCacheError`` `storage` or `index` if the directory cannot be used.
    public init(
        directory: CacheDirectory,
        origin: any OriginClient,
        configuration: CacheConfiguration = CacheConfiguration(),
        logger: Logger = Logger(label: "StreamCache")
    ) throws {
        try directory.prepare()
        self.environment = SessionEnvironment(
            configuration: configuration,
            index: try CacheIndex(path: directory.indexPath),
            directory: directory,
            origin: origin,
            logger: logger
        )
    }

    /// Checks that `url` is an absolute http(s) URL the engine can fetch.
    ///
    /// - Throws: ``StreamCacheError`` `unsupportedScheme` or `invalidURL`.
    public nonisolated static func validate(_ url: URL) throws {
        guard let scheme = url.scheme?.lowercased() else {
            throw StreamCacheError(.invalidURL, "not an absolute URL: \(url.absoluteString)")
        }
        guard scheme == "http" || scheme == "https" else {
            throw StreamCacheError(
                .unsupportedScheme,
                "unsupported URL scheme '\(scheme)' (only http and https): \(url.absoluteString)"
            )
        }
        guard let host = url.host, !host.isEmpty else {
            throw StreamCacheError(.invalidURL, "URL has no host: \(url.absoluteString)")
        }
    }

    /// Reads bytes `[offset, offset + length)` of `url` (`length == nil`: to the end).
    ///
    /// - Parameters:
    ///   - url: the origin URL.
    ///   - offset: the first byte.
    ///   - length: how many bytes, or `nil` for all to the end of the resource.
    ///   - headers: per-resource request headers for the origin (sent, never stored).
    /// - Returns: a stream of the bytes, in order, delivered as they become available.
    /// - Throws: ``StreamCacheError`` for an invalid URL or range, or an unusable cache.
    public func read(
        _ url: URL,
        offset: Int64 = 0,
        length: Int64? = nil,
        headers: [HeaderField] = []
    ) async throws -> ByteStream {
        try Self.validate(url)
        guard offset >= 0, (length ?? 0) >= 0, length.map({ offset <= Int64.max - $0 }) ?? true else {
            throw StreamCacheError(
                .invalidRange,
                "invalid range: offset \(offset), length \(length.map(String.init) ?? "to end")"
            )
        }
        let key = configuration.key(url)
        leases[key, default: 0] += 1
        let session: ResourceSession
        do {
            session = try await self.session(key: key, url: url, headers: headers)
        } catch {
            releaseLease(key)
            throw error
        }
        let lease = SessionLease(session: session) { [weak self] in
            await self?.releaseLease(key)
        }
        return ByteStream(lease: lease, offset: offset, length: length, configuration: configuration)
    }

    /// What is known about `url`: length, type, validators and range support.
    ///
    /// From the cache when the resource is known there (revalidated with the origin when due),
    /// else from a `Range: bytes=0-1` request, as AVFoundation makes; those bytes are cached.
    ///
    /// - Throws: ``StreamCacheError`` as ``read(_:offset:length:headers:)`` and its stream do.
    public func contentInfo(_ url: URL, headers: [HeaderField] = []) async throws -> ContentInfo {
        let stream = try await read(url, offset: 0, length: 2, headers: headers)
        var iterator = stream.makeAsyncIterator()
        _ = try await iterator.nextChunk()
        return await stream.currentInfo()
    }

    private func session(key: String, url: URL, headers: [HeaderField]) async throws -> ResourceSession {
        switch sessions[key] {
        case .open(let session):
            return session
        case .opening(let task):
            return try await task.value
        case nil:
            let task = Task { [environment, validatedAt] in
                try await ResourceSession.open(
                    key: key,
                    url: url,
                    headers: headers,
                    environment: environment,
                    validatedAt: validatedAt[key]
                ) { [weak self] key in
                    Task { await self?.sessionMayBeIdle(key) }
                }
            }
            sessions[key] = .opening(task)
            do {
                let session = try await task.value
                sessions[key] = .open(session)
                return session
            } catch {
                sessions[key] = nil
                throw error
            }
        }
    }

    private func releaseLease(_ key: String) {
        leases[key, default: 1] -= 1
        guard leases[key] == 0 else { return }
        leases[key] = nil
        // One closer per lingering key; a later release only moves the time it waits for.
        let lingering = releasedAt[key] != nil
        releasedAt[key] = .now
        if !lingering { Task { await closeAfterLinger(key) } }
    }

    /// Waits until `key` has gone unused for ``CacheConfiguration/idleLinger``, then closes its
    /// session if nobody uses it.
    private func closeAfterLinger(_ key: String) async {
        while let released = releasedAt[key] {
            guard leases[key] == nil else {
                releasedAt[key] = nil  // in use again: its next release starts another closer
                return
            }
            let due = released.advanced(by: configuration.idleLinger)
            if due <= .now { break }
            try? await Task.sleep(until: due)
        }
        releasedAt[key] = nil
        await sessionMayBeIdle(key)
    }

    /// Whether every byte of `url` is in the cache (its length known and all of it recorded).
    public func isComplete(_ url: URL) async -> Bool {
        guard let record = try? await index.resource(forKey: configuration.key(url)),
            let length = record.info.length,
            let ranges = try? await index.ranges(of: record.id)
        else { return false }
        return length == 0 || ranges.contains(ByteRange(0, length))
    }

    /// Closes the session of `key` if nobody uses it any more, then enforces the budget.
    private func sessionMayBeIdle(_ key: String) async {
        guard leases[key] == nil, releasedAt[key] == nil, case .open(let session) = sessions[key] else { return }
        guard await session.isIdle else { return }
        guard leases[key] == nil, case .open(let current) = sessions[key], current === session else { return }
        sessions[key] = nil
        validatedAt[key] = await session.validatedAt
        await evictIfNeeded()
    }

    /// Waits until every fetch has ended and its bytes are durable and recorded, then enforces
    /// the budget. Call before the process exits; reads still running are not waited for.
    public func shutdown() async {
        releasedAt = [:]
        for (key, entry) in sessions {
            guard case .open(let session) = entry else { continue }
            await session.drain()
            if leases[key] == nil, case .open(let current) = sessions[key], current === session { sessions[key] = nil }
        }
        await evictIfNeeded()
    }

    /// Ids of the resources this engine has open sessions on.
    private func resourcesInUse() async -> Set<Int64> {
        var ids = Set<Int64>()
        for entry in sessions.values {
            if case .open(let session) = entry { ids.insert(await session.record.id) }
        }
        return ids
    }

    /// Removes least recently used resources until the cache fits its budget.
    ///
    /// Resources open in this or another process, and pinned ones, are kept. A resource that is
    /// alone over the budget is cut down to the budget (its first bytes are kept).
    public func evictIfNeeded() async {
        // One pass at a time; a caller arriving during a pass runs another after it.
        let previous = eviction
        let pass = Task {
            await previous?.value
            await self.evictionPass()
        }
        eviction = pass
        await pass.value
    }

    private func evictionPass() async {
        do {
            var total = try await index.totalCachedBytes()
            guard total > configuration.maxSize else { return }
            let inUse = await resourcesInUse()
            let candidates = try await index.evictionCandidates().filter { !inUse.contains($0.id) }
            for (position, candidate) in candidates.enumerated() where total > configuration.maxSize {
                // Whole resources, least recently used first; only the most recent one, if it
                // alone is over the budget, is cut down instead of removed.
                let isLast = position == candidates.count - 1
                let rest = total - candidate.cachedBytes
                let keep = isLast && rest < configuration.maxSize ? configuration.maxSize - rest : 0
                if try await remove(candidate, keeping: keep) {
                    total = rest + keep
                }
            }
        } catch {
            logger.warning("eviction failed", metadata: ["error": "\(error)"])
        }
    }

    /// Removes `record`, or cuts it to its first `keep` cached bytes, unless some process has it open.
    ///
    /// - Returns: whether it was removed or cut.
    private func remove(_ record: ResourceRecord, keeping keep: Int64) async throws -> Bool {
        let path = directory.dataPath(id: record.id)
        let index = index
        let done = try await Self.withExclusiveLock(path: path) { descriptor in
            if keep <= 0 {
                try await index.delete(id: record.id)
                unlink(path)
                return
            }
            var kept = RangeSet()
            var budget = keep
            for range in try await index.ranges(of: record.id).ranges where budget > 0 {
                let take = min(range.count, budget)
                kept.insert(ByteRange(range.lowerBound, range.lowerBound + take))
                budget -= take
            }
            try await index.setRanges(kept, of: record.id)
            // Through the locked descriptor: opening the file again would wait for our own lock.
            if let descriptor, ftruncate(descriptor, off_t(kept.ranges.last?.upperBound ?? 0)) != 0 {
                throw StreamCacheError.storage("cannot truncate", path: path, errno: errno)
            }
        }
        if done { logger.debug("evicted", metadata: ["url": "\(record.url)", "kept": "\(keep)"]) }
        return done
    }

    /// Runs `body` while holding an exclusive lock on the data file at `path`, if nobody has it open.
    /// `body` gets the locked descriptor, or `nil` if the file does not exist.
    private static func withExclusiveLock(path: String, _ body: (Int32?) async throws -> Void) async throws -> Bool {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        if fd < 0 {
            guard errno == ENOENT else { throw StreamCacheError.storage("cannot open", path: path, errno: errno) }
            try await body(nil)
            return true
        }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return false }
        try await body(fd)
        return true
    }

    /// Deletes the cached bytes and index entry of `url`, even while it is read (readers keep
    /// their open file; nothing they fetch afterwards is recorded).
    ///
    /// - Returns: whether the cache held it.
    @discardableResult
    public func remove(_ url: URL) async throws -> Bool {
        guard let record = try await index.resource(forKey: configuration.key(url)) else { return false }
        try await index.delete(id: record.id)
        unlink(directory.dataPath(id: record.id))
        return true
    }

    /// Deletes every resource in the cache.
    ///
    /// - Returns: how many resources were removed.
    @discardableResult
    public func removeAll() async throws -> Int {
        let all = try await index.allResources()
        for (record, _) in all {
            try await index.delete(id: record.id)
            unlink(directory.dataPath(id: record.id))
        }
        return all.count
    }

    /// Every cached resource with its present ranges, most recently used first.
    public func resources() async throws -> [(ResourceRecord, RangeSet)] {
        try await index.allResources()
    }
}
