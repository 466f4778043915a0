import Foundation
import Logging

/// The cache: answers byte-range reads of remote resources from disk where it can and from the
/// origin where it must, writing down what it fetches so each byte is downloaded once.
///
/// One engine per cache directory per process; several processes may share a directory.
///
/// This file holds its sessions and its life; the rest is by concern: `+Eviction` (the budget),
/// `+Removal` (what users remove or pin), `+Housekeeping` (chores, lingering sessions, access
/// times), `+ServingFiles` (files handed to servers), `+Relay`, `+KeyRules`, `+Sharing`, `+Verify`.
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
    nonisolated var logger: Logger { environment.logger }

    /// The sessions by key and where each is in its life (leased, opening, open, lingering).
    var sessions = SessionTable<ResourceSession, Task<ResourceSession, Error>>()
    /// The keys whose linger the closer waits out, in the order they started lingering.
    var lingering = LingerQueue()
    /// Whether the closer task runs (it ends when nothing lingers).
    var isCloserRunning = false
    var eviction: Task<Void, Never>?
    /// The last write of access times (``writeAccessTimes(after:)``).
    var accessTimesWrite: Task<Void, Never>?
    /// When room was last made on a full disk.
    var lastMadeRoom: ContinuousClock.Instant?
    nonisolated let chores = EngineChores()
    /// What ``sessionlessFile(key:)`` answered in the last second, kept open for the next ranges.
    nonisolated let sessionlessFiles = SessionlessFiles()
    /// Empties the chore mailbox; owned by the engine, ended and awaited by ``shutdown()``.
    var housekeeping: Task<Void, Never>?

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
        let reason = configuration.refusalWaits(url) ? await BlockingWork.names.run { refuse(url) } : refuse(url)
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
        // Judged here when that does not wait: awaiting would leave the actor and come back.
        if try !Self.validateWithoutWaiting(url, configuration: configuration) {
            try await Self.validate(url, configuration: configuration)
        }
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

    func releaseLease(_ key: String) {
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

    /// How long an open for another variant of a resource waits for the reads of the stored one
    /// to end before it shares that variant.
    static let variantWait = Duration.seconds(2)

    /// The most sessions that linger at once, unused, before the oldest close early.
    static let lingeringLimit = 128

    /// Whether every byte of `url` is in the cache (its length known and all of it recorded).
    public func isComplete(_ url: URL) async -> Bool {
        guard let record = try? await index.resource(forKey: configuration.cacheKey(url)),
            let ranges = try? await index.ranges(of: record.id)
        else { return false }
        return record.info.isComplete(with: ranges)
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

    /// The bytes of `url` the cache holds now, with what it knows of the resource; `nil` if
    /// it holds nothing of it. Nothing is fetched.
    public func cachedRanges(_ url: URL) async -> (info: ContentInfo, ranges: ByteRangeSet)? {
        guard let record = try? await index.resource(forKey: configuration.cacheKey(url)),
            let ranges = try? await index.ranges(of: record.id), !ranges.isEmpty
        else { return nil }
        return (record.info, ranges)
    }

    /// Every cached resource with its present ranges, most recently used first.
    public func resources() async throws -> [(ResourceRecord, ByteRangeSet)] {
        try await index.allResources()
    }
}
