import Foundation
import Logging

/// The cache: answers byte-range reads of remote resources from disk where it can and from the
/// origin where it must, writing down what it fetches so each byte is downloaded once.
///
/// One engine per cache directory per process; several processes may share a directory.
public actor CacheEngine {
    /// What the engine and its resource sessions share.
    nonisolated let environment: SessionEnvironment
    /// Set if the engine found the index damaged and started an empty cache: what it did, one
    /// line for the user.
    public nonisolated let recoveryNote: String?
    /// The directory the engine works in.
    public nonisolated var directory: CacheDirectory { environment.directory }
    /// The index of the directory (the engine's alone: a user must not record bytes it did not write).
    package nonisolated var index: CacheIndex { environment.index }
    /// The engine's configuration.
    public nonisolated var configuration: CacheConfiguration { environment.configuration }
    private nonisolated var logger: Logger { environment.logger }

    /// The sessions by key and where each is in its life (leased, opening, open, lingering).
    private(set) var sessions = SessionTable<ResourceSession, Task<ResourceSession, Error>>()
    /// The keys whose linger the closer waits out, in the order they started lingering.
    private var lingering = LingerQueue()
    /// Whether the closer task runs (it ends when nothing lingers).
    private var isCloserRunning = false
    private var eviction: Task<Void, Never>?
    /// The last write of access times (``writeAccessTimes(after:)``).
    private var accessTimesWrite: Task<Void, Never>?
    /// When room was last made on a full disk.
    private var lastMadeRoom: ContinuousClock.Instant?
    private nonisolated let chores = EngineChores()
    /// What ``sessionlessFile(key:)`` answered in the last second, kept open for the next ranges.
    nonisolated let sessionlessFiles = SessionlessFiles()
    /// Empties the chore mailbox; owned by the engine, ended and awaited by ``shutdown()``.
    private var housekeeping: Task<Void, Never>?

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
        let index: CacheIndex
        do {
            index = try CacheIndex(path: directory.indexPath)
            recoveryNote = nil
        } catch let error as StreamCacheError where error.kind == .damagedIndex {
            // Never a dead end: the damaged index is kept aside for a look, the cache starts empty.
            let aside = try directory.setDamagedIndexAside()
            index = try CacheIndex(path: directory.indexPath)
            recoveryNote = "\(error.message); moved it to \(aside) and started an empty cache"
        }
        self.environment = SessionEnvironment(
            configuration: configuration,
            index: index,
            directory: directory,
            origin: RedirectingOrigin(client: origin, configuration: configuration),
            logger: logger,
            reserve: DiskReserve(path: directory.dataDirectory, reserve: configuration.diskReserve),
            mark: try ProcessMark(folder: directory.ownersDirectory),
            accessTimes: AccessTimes { [chores] in chores.post(.accessTimesNoted) },
            budget: Locked(configuration.maxSize)
        )
    }

    /// The byte budget the engine keeps the cache within: ``CacheConfiguration/maxSize`` until
    /// ``changeBudget(to:)``.
    public nonisolated var budget: Int64 { environment.budget.value }

    /// Keeps the cache within `bytes` from now on (a budget changed while the engine runs, as
    /// `streamcache config --max-size` does for a running `serve`), evicting at once if it is over.
    public func changeBudget(to bytes: Int64) async {
        environment.budget.withLock { $0 = max(0, bytes) }
        await evictIfNeeded()
    }

    /// Checks that `url` is an absolute http(s) URL with a host and a valid port.
    ///
    /// - Throws: ``StreamCacheError`` `unsupportedScheme` or `invalidURL`.
    public nonisolated static func validate(_ url: URL) throws {
        try OriginURLRules.check(url)
    }

    /// Checks that `url` is one the engine fetches under `configuration` (``validate(_:)`` and
    /// ``CacheConfiguration/refuseURL``). A judgement that waits (a name looked up) runs on a
    /// thread of its own (``BlockingWork``), never on the caller's: the engine's actor and the
    /// tasks beside it go on meanwhile.
    ///
    /// - Throws: ``StreamCacheError`` `unsupportedScheme` or `invalidURL`.
    public nonisolated static func validate(_ url: URL, configuration: CacheConfiguration) async throws {
        try OriginURLRules.check(url)
        let refuse = configuration.refuseURL
        let reason = configuration.refusalWaits(url) ? await BlockingWork.run { refuse(url) } : refuse(url)
        if let reason { throw StreamCacheError(.invalidURL, reason) }
    }

    /// ``validate(_:configuration:)`` for a caller that must not wait (an event loop): `false`,
    /// with nothing judged, when judging `url` would wait.
    ///
    /// - Throws: ``StreamCacheError`` `unsupportedScheme` or `invalidURL`.
    public nonisolated static func validateWithoutWaiting(_ url: URL, configuration: CacheConfiguration) throws -> Bool
    {
        try OriginURLRules.check(url)
        guard !configuration.refusalWaits(url) else { return false }
        if let reason = configuration.refuseURL(url) { throw StreamCacheError(.invalidURL, reason) }
        return true
    }

    /// Opens `url`: one handle for its content information and its reads.
    ///
    /// - Parameters:
    ///   - url: the origin URL.
    ///   - headers: per-resource request headers for the origin (sent, never stored).
    /// - Throws: ``StreamCacheError`` for an invalid URL or an unusable cache.
    public func open(_ url: URL, headers: [HeaderField] = []) async throws -> CachedResource {
        try await open(url, originHeaders: OriginHeaders(fields: headers))
    }

    /// Opens `url` with headers for its origin and, per host, for the origins it redirects to.
    ///
    /// - Throws: ``StreamCacheError`` for an invalid or refused URL, or an unusable cache.
    public func open(_ url: URL, originHeaders headers: OriginHeaders) async throws -> CachedResource {
        try await Self.validate(url, configuration: configuration)
        let key = configuration.cacheKey(url)
        sessions.lease(key)
        opened += 1
        let session: ResourceSession
        do {
            session = try await self.session(key: key, url: url, headers: headers)
        } catch let error as StreamCacheError where error.kind == .diskFull {
            // No room for a new row or file: make some, then try once more.
            await makeRoom(now: true)
            do {
                session = try await self.session(key: key, url: url, headers: headers)
            } catch {
                releaseLease(key)
                throw error
            }
        } catch {
            releaseLease(key)
            throw error
        }
        startHousekeeping()
        let lease = SessionLease(session: session, key: key, chores: chores)
        return CachedResource(lease: lease, configuration: configuration, url: url)
    }

    /// How many resources were opened (for tests that count opens per request).
    package private(set) var opened = 0

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
        try Self.validateRange(offset: offset, length: length)
        return try await open(url, headers: headers).read(from: offset, length: length)
    }

    /// Checks that `[offset, offset + length)` is a range a read can ask for.
    ///
    /// - Throws: ``StreamCacheError`` `invalidRange`.
    public nonisolated static func validateRange(offset: Int64, length: Int64?) throws {
        guard offset >= 0, (length ?? 0) >= 0, length.map({ offset <= Int64.max - $0 }) ?? true else {
            throw StreamCacheError(
                .invalidRange,
                "invalid range: offset \(offset), length \(length.map(String.init) ?? "to end")"
            )
        }
    }

    /// What is known about `url`: length, type, validators and range support (see
    /// ``CachedResource/info()``).
    ///
    /// - Throws: ``StreamCacheError`` as ``open(_:headers:)`` and ``CachedResource/info()`` do.
    public func contentInfo(_ url: URL, headers: [HeaderField] = []) async throws -> ContentInfo {
        try await open(url, headers: headers).info()
    }

    private func session(key: String, url: URL, headers: OriginHeaders) async throws -> ResourceSession {
        if case .open(let session) = sessions.state(key), await session.isBroken, sessions.isCurrent(key, session) {
            // A failure stays with the requests that met it: the next one starts from the index.
            sessions.forget(key)
            await session.withdrawServable()
            await session.cancelFetches()
        }
        if case .open(let session) = sessions.state(key), session.headers != headers,
            await session.holdsAnotherVariant(than: headers, at: url)
        {
            // Stored for other values of the request fields its response varies on (RFC 9111
            // §4.1): once the reads of that variant end (a request just answered may still be
            // recording its bytes), the session goes and this request's variant is fetched anew.
            // A read that goes on past `variantWait` shares the stored variant instead.
            let deadline = ContinuousClock.now.advanced(by: Self.variantWait)
            while await !session.isIdle, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(10))
            }
            if await session.isIdle, sessions.isCurrent(key, session) {
                sessions.forget(key)
                await session.withdrawServable()
            }
        }
        switch sessions.state(key) {
        case .open(let session):
            await Self.note(url, headers, openedOn: session)
            return session
        case .opening(let task):
            let session = try await task.value
            await Self.note(url, headers, openedOn: session)
            return session
        case nil:
            // Awaited by this caller and by every other caller opening the same key meanwhile.
            let task = Task { [environment] in
                try await ResourceSession.open(
                    key: key,
                    url: url,
                    headers: headers,
                    environment: environment
                ) { [chores] key in
                    chores.post(.sessionMayBeIdle(key: key))
                }
            }
            sessions.startOpening(key, task)
            do {
                let session = try await task.value
                sessions.opened(key, session)
                return session
            } catch {
                sessions.forget(key)
                throw error
            }
        }
    }

    /// Tells `session` a reader opened it with `url` and `headers`, only when they differ from
    /// the newest it has: the usual open costs no hop onto the session.
    private static func note(_ url: URL, _ headers: OriginHeaders, openedOn session: ResourceSession) async {
        guard session.url != url || session.headers != headers else { return }
        await session.opened(with: url, headers: headers)
    }

    private func releaseLease(_ key: String) {
        // A key starts lingering once; a later release only moves the time it waits for.
        let now = ContinuousClock.now
        guard sessions.release(key, now: now) else { return }
        lingering.append(key, due: now.advanced(by: configuration.idleLinger))
        if !isCloserRunning {
            isCloserRunning = true
            chores.post(.closeLingering)
        }
    }

    deinit {
        chores.close()
    }

    /// Starts the engine's chores now rather than at the first ``open(_:headers:)``: a server
    /// whose reads are all answered from sessionless files (``sessionlessFile(key:)``) opens no resource,
    /// and its access times, noted all the same, were written only when it stopped.
    package func startChores() {
        startHousekeeping()
    }

    /// Starts the task that does the engine's chores, once.
    private func startHousekeeping() {
        guard housekeeping == nil else { return }
        let mailbox = chores.open()
        // Times noted before the mailbox opened were posted to none.
        defer { if environment.accessTimes.hasPending { chores.post(.accessTimesNoted) } }
        // Owned by the engine: `shutdown()` ends the mailbox and awaits it. It holds the engine
        // weakly, so an engine nobody shuts down still goes away (its deinit ends the mailbox).
        housekeeping = Task { [weak self] in
            await withDiscardingTaskGroup { group in
                for await chore in mailbox {
                    switch chore {
                    case .leaseReleased(let key):
                        group.addTask { await self?.releaseLease(key) }
                    case .readerAbandoned(let session, let reader):
                        group.addTask { await session.removeReader(reader) }
                    case .sessionMayBeIdle(let key):
                        group.addTask { await self?.sessionMayBeIdle(key) }
                    case .closeLingering:
                        group.addTask { await self?.closeLingering() }
                    case .diskFull:
                        group.addTask { await self?.makeRoom() }
                    case .accessTimesNoted:
                        group.addTask { await self?.writeAccessTimes(after: .seconds(1)) }
                    }
                }
                // Lingering sessions need not wait out their time once the engine stops.
                group.cancelAll()
            }
        }
    }

    /// How long an open for another variant of a resource waits for the reads of the stored one
    /// to end before it shares that variant.
    static let variantWait = Duration.seconds(2)

    /// The most sessions that linger at once, unused, before the oldest close early.
    static let lingeringLimit = 128

    /// Closes the session of each lingering key once it has gone unused for
    /// ``CacheConfiguration/idleLinger``, oldest first, until none lingers: one waiting task for
    /// every key (a task each meant thousands of sleeping tasks with many small resources). The
    /// closes themselves run side by side, so they keep up with the opens.
    private func closeLingering() async {
        defer { isCloserRunning = false }
        await withDiscardingTaskGroup { closes in
            while let (key, queuedDue) = lingering.first {
                let step = sessions.lingerStep(
                    key,
                    now: .now,
                    linger: configuration.idleLinger,
                    stopping: Task.isCancelled
                )
                switch step {
                case .wait(let due) where due > queuedDue:
                    // Leased and released again since it was queued: back in line with its new time.
                    lingering.removeFirst()
                    lingering.append(key, due: due)
                case .wait where lingering.count > Self.lingeringLimit:
                    // Each lingering session holds a data file open: past the limit, the
                    // oldest closes at once (thousands of small resources in a few seconds ran a
                    // server out of descriptors).
                    lingering.removeFirst()
                    sessions.stopLingering(key)
                    closes.addTask { await self.sessionMayBeIdle(key) }
                case .wait(let due):
                    // In steps, to see the queue pass the limit while it waits.
                    try? await Task.sleep(until: min(due, .now.advanced(by: .milliseconds(50))))
                case .inUse:
                    lingering.removeFirst()
                case .close:
                    lingering.removeFirst()
                    closes.addTask { await self.sessionMayBeIdle(key) }
                }
            }
        }
    }

    /// Whether every byte of `url` is in the cache (its length known and all of it recorded).
    public func isComplete(_ url: URL) async -> Bool {
        guard let record = try? await index.resource(forKey: configuration.cacheKey(url)),
            let ranges = try? await index.ranges(of: record.id)
        else { return false }
        return record.info.isComplete(with: ranges)
    }

    /// Closes the session of `key` if nobody uses it any more, then enforces the budget.
    private func sessionMayBeIdle(_ key: String) async {
        guard await closeIfIdle(key) else { return }
        // Only now: the closed session no longer holds the shared lock of its file, so eviction
        // can take its exclusive one and cut the resource down to the budget.
        await evictIfNeeded()
    }

    /// Closes the session of `key` if nobody uses it; the session and its file are released
    /// when this returns.
    ///
    /// - Returns: whether it was closed.
    private func closeIfIdle(_ key: String) async -> Bool {
        guard let session = sessions.closable(key), await session.isIdle, sessions.close(key, session) else {
            return false
        }
        await session.withdrawServable()
        _ = await session.discardIfEmpty()
        return true
    }

    /// Waits until every fetch has ended and its bytes are durable and recorded, then enforces
    /// the budget. Call before the process exits; reads still running are not waited for, and
    /// fetches still running after ``CacheConfiguration/shutdownGrace`` are cancelled.
    public func shutdown() async {
        chores.close()
        await housekeeping?.value
        housekeeping = nil
        for key in sessions.entries.keys { sessions.stopLingering(key) }
        sessionlessFiles.removeAll()
        await closeSessions()
        await writeAccessTimes()
        try? await index.releaseClaims(owner: environment.mark.token)
        // The closed sessions hold no file locks any more: eviction can cut what they read.
        await evictIfNeeded()
    }

    /// Waits for the fetches of every session, cancelling those that outlast the grace, and
    /// closes the sessions nobody uses.
    private func closeSessions() async {
        let open = sessions.openSessions
        // Owned by this call: fetches still running after the grace (a slow origin) are
        // cancelled, so shutdown ends whatever the origins do; cancelled once the drain is done.
        let deadline = Task { [grace = configuration.shutdownGrace] in
            try? await Task.sleep(for: grace)
            guard !Task.isCancelled else { return }
            for (_, session) in open { await session.cancelFetches() }
        }
        for (key, session) in open {
            await session.drain()
            guard sessions.close(key, session) else { continue }
            await session.withdrawServable()
            _ = await session.discardIfEmpty()
        }
        deadline.cancel()
        await deadline.value
    }

    /// Ids of the resources this engine has open sessions on.
    private func resourcesInUse() async -> Set<Int64> {
        var ids = Set<Int64>()
        for (_, session) in sessions.openSessions { ids.insert(await session.record.id) }
        return ids
    }

    /// Writes the access times noted since the last write (``AccessTimes``), after `delay`, in
    /// which more notes gather. Best-effort: they only order eviction.
    ///
    /// One write at a time, in order: a write waits for the one under way, so an eviction's
    /// write returns only once the times another write took are in the index.
    private func writeAccessTimes(after delay: Duration = .zero) async {
        if delay > .zero { try? await Task.sleep(for: delay) }
        let previous = accessTimesWrite
        let write = Task { [index, logger, times = environment.accessTimes] in
            await previous?.value
            do {
                try await index.touch(times.take())
            } catch {
                logger.debug("access times not recorded", metadata: ["error": "\(error)"])
            }
        }
        accessTimesWrite = write
        await write.value
    }

    /// Makes room on a full disk, for failed writes at most once every 5 seconds, for a resource
    /// that cannot be opened (`now`) at once.
    ///
    /// Bytes the index never recorded go first. Then least recently used resources (not in use,
    /// not pinned) go: half of what the cache holds, so that it takes new bytes for a while, and
    /// more if the disk needs more to have the write reserve free and one check interval more.
    /// If the whole cache could not free that (something else filled the disk), emptying it
    /// would not let it keep anything new: only a resource that cannot be opened frees room, as
    /// much as an index row needs.
    private func makeRoom(now: Bool = false) async {
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
    private static let indexRoom: Int64 = 256 << 10

    /// Removes least recently used resources until the cache fits its budget.
    ///
    /// Resources open in this or another process, and pinned ones, are kept. A resource that is
    /// alone over the budget is cut down to the budget (its first bytes are kept).
    public func evictIfNeeded() async {
        await evict(downTo: budget)
    }

    /// Removes least recently used resources until the cache holds at most `budget` bytes.
    private func evict(downTo budget: Int64) async {
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

    private func evictionPass(budget: Int64) async {
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

    /// Removes `record`, or cuts it to its first `keep` cached bytes, unless some process has it open.
    ///
    /// - Returns: whether it was removed or cut.
    private func remove(_ record: ResourceRecord, keeping keep: Int64) async throws -> Bool {
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
    private func delete(_ records: [ResourceRecord]) async throws {
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

    /// The bytes of `url` the cache holds now, with what it knows of the resource; `nil` if
    /// it holds nothing of it. Nothing is fetched.
    public func cachedRanges(_ url: URL) async -> (info: ContentInfo, ranges: ByteRangeSet)? {
        guard let record = try? await index.resource(forKey: configuration.cacheKey(url)),
            let ranges = try? await index.ranges(of: record.id), !ranges.isEmpty
        else { return nil }
        return (record.info, ranges)
    }

    /// Sends `request` to its origin under the engine's rules (the URL and every redirect target
    /// checked, at most ``CacheConfiguration/maxRedirects`` hops, `headers` sent only where they
    /// belong) and hands the final answer to `handle`. Nothing is cached: for callers that keep
    /// the bytes themselves, such as an offline download.
    ///
    /// - Throws: ``StreamCacheError`` for a refused URL, too many redirects or a transport error,
    ///   or what `handle` threw.
    public nonisolated func fetchUncached<Result: Sendable>(
        _ request: OriginRequest,
        headers: OriginHeaders = OriginHeaders(),
        _ handle: @Sendable (OriginResponseHead, OriginBody) async throws -> Result
    ) async throws -> Result {
        try await environment.origin.fetch(request, headers: headers, handle)
    }

    /// What a server may send of `url` straight from the cache file, without a read (see
    /// ``ServableFile``); `nil` unless its session is open in this process and has said so.
    package nonisolated func publishedFile(_ url: URL) -> ServableFile? {
        publishedFile(key: configuration.cacheKey(url))
    }

    /// What a server may send of the resource with cache key `key` (``CacheConfiguration/key``).
    package nonisolated func publishedFile(key: String) -> ServableFile? {
        environment.published[key]
    }

    /// What a server may send of `key` when no session of this process says (``publishedFile(key:)``):
    /// the recorded bytes of a version that is fresh, varies on no request field, and whose file
    /// is as the index last saw it, read under a shared lock of its own. Anything else (stale,
    /// partly cached, changed behind the cache's back) is `nil`, for a session to decide.
    ///
    /// It opens no session, so a first touch of a cached resource costs an index read, an open
    /// and a lock, on the calling thread, and never waits (a server's event loop calls it). What
    /// it answers stays open for a second after its last use (``SessionlessFiles``), so the next
    /// ranges of the resource cost none of that.
    package nonisolated func sessionlessFile(key: String) -> ServableFile? {
        if let (kept, id) = sessionlessFiles.take(key) {
            environment.accessTimes.note(id)
            return kept
        }
        guard let (record, recorded) = index.resourceNow(forKey: key), let length = record.info.length, length > 0,
            !recorded.isEmpty, record.info.stored.vary.isEmpty, let seen = record.fileState,
            let freshUntil = ResourceSession.freshUntil(of: record.info, configuration: configuration),
            let (file, status) = CacheFile.openExistingLocked(path: directory.dataPath(id: record.id)),
            status.state == seen, !status.isUnlinked
        else { return nil }
        environment.accessTimes.note(record.id)
        let resource = ServableFile(
            file: file,
            info: record.info,
            written: recorded,
            freshUntil: freshUntil,
            tokenDigest: record.tokenDigest
        )
        sessionlessFiles.keep(resource, id: record.id, seen: seen, for: key)
        return resource
    }

    /// Every cached resource with its present ranges, most recently used first.
    public func resources() async throws -> [(ResourceRecord, ByteRangeSet)] {
        try await index.allResources()
    }
}
