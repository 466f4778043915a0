import Foundation
import Logging

/// All reads of one resource in this process: one per cache key, shared by every reader.
///
/// A reader asks for the span at its position; the session answers from the cache file where the
/// bytes are present, joins an in-flight fetch that will reach the position soon, or starts a
/// fetch of exactly the missing bytes. Fetched bytes are written to the file, handed to every
/// waiting reader, made durable in batches and only then recorded in the index.
///
/// The origin may replace the resource (new validator or length). The session then moves to a new
/// *generation*: a new index row and data file; fetches of the old version are stopped, readers
/// that already received old bytes fail with `resourceChanged`, the others go on with new bytes.
actor ResourceSession {
    let key: String
    let url: URL
    let headers: [HeaderField]
    let environment: SessionEnvironment
    nonisolated var configuration: CacheConfiguration { environment.configuration }
    nonisolated var index: CacheIndex { environment.index }
    nonisolated var directory: CacheDirectory { environment.directory }
    nonisolated var origin: any OriginClient { environment.origin }
    nonisolated var logger: Logger { environment.logger }

    private(set) var record: ResourceRecord
    private(set) var file: CacheFile
    /// Bytes written to `file` in this generation (readable; durable or about to be).
    private(set) var available: RangeSet
    private(set) var generation = 0
    var fetches: [Int: Fetch] = [:]
    var readers: [Int: ReaderState] = [:]
    private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextID = 0
    /// When the validators were last confirmed by the origin (nil: never in this session).
    var validatedAt: ContinuousClock.Instant?
    var validation: Task<Void, Error>?
    var reset: Task<Void, Error>?
    /// When the index was last read for ranges other processes recorded.
    private var lastRefresh = ContinuousClock.now
    /// Called when the session has neither readers nor fetches.
    private let onIdle: @Sendable (String) -> Void

    private init(
        key: String,
        url: URL,
        headers: [HeaderField],
        environment: SessionEnvironment,
        record: ResourceRecord,
        file: CacheFile,
        available: RangeSet,
        validatedAt: ContinuousClock.Instant?,
        onIdle: @escaping @Sendable (String) -> Void
    ) {
        self.key = key
        self.url = url
        self.headers = headers
        self.environment = environment
        self.record = record
        self.file = file
        self.available = available
        self.validatedAt = validatedAt
        self.onIdle = onIdle
    }

    /// Opens the session for `key`: finds or creates the index row, opens and locks its data file,
    /// and drops any recorded range the file does not actually hold.
    static func open(
        key: String,
        url: URL,
        headers: [HeaderField],
        environment: SessionEnvironment,
        validatedAt: ContinuousClock.Instant?,
        onIdle: @escaping @Sendable (String) -> Void
    ) async throws -> ResourceSession {
        while true {
            let index = environment.index
            let created = try await index.resource(forKey: key, creatingWithURL: url.absoluteString)
            let path = environment.directory.dataPath(id: created.id)
            let file = try await CacheFile.openLocked(path: path)
            // Holding the shared lock, the row can no longer be evicted; check it survived until now.
            guard let record = try await index.resource(id: created.id) else {
                unlink(path)
                continue
            }
            let recorded = try await index.ranges(of: record.id)
            let present = recorded.clamped(below: try file.size())
            if present != recorded { try await index.setRanges(present, of: record.id) }
            try await index.touch(id: record.id)
            return ResourceSession(
                key: key,
                url: url,
                headers: headers,
                environment: environment,
                record: record,
                file: file,
                available: present,
                validatedAt: record.info.length == nil ? nil : validatedAt,
                onIdle: onIdle
            )
        }
    }

    /// What the session knows about the resource.
    var info: ContentInfo { record.info }

    // MARK: Readers

    /// Registers a reader of `[offset, end)` (`end == nil`: to the end of the resource).
    func addReader(offset: Int64, end: Int64?) -> Int {
        nextID += 1
        readers[nextID] = ReaderState(start: offset, position: offset, end: end, cachedAtStart: available)
        return nextID
    }

    /// Forgets reader `id` and stops the fetches nobody else needs.
    func removeReader(_ id: Int) {
        guard readers.removeValue(forKey: id) != nil else { return }
        waiters.removeValue(forKey: id)?.resume()
        cancelUnwantedFetches()
        notifyIfIdle()
    }

    /// The next span of bytes for reader `id` at `position`, waiting for the origin if needed.
    ///
    /// - Throws: the error of the fetch the reader waited on, `resourceChanged` if the resource was
    ///   replaced after the reader received bytes, or `CancellationError`.
    func nextSpan(reader id: Int, at position: Int64) async throws -> Span {
        guard readers[id] != nil else { throw CancellationError() }
        readers[id]?.position = position
        var validated = false
        while true {
            try Task.checkCancellation()
            guard var reader = readers[id] else { throw CancellationError() }
            if let error = reader.error {
                readers[id]?.error = nil
                throw error
            }
            if let reset {
                try await reset.value
                continue
            }
            if needsValidation && !validated {
                try await validate()
                validated = true
                continue
            }
            let end = min(reader.end ?? Int64.max, record.info.length ?? Int64.max)
            if position >= end { return .end }
            if let present = available.range(containing: position) {
                reader.waitingOn = nil
                readers[id] = reader
                var upper = min(present.upperBound, end)
                let cached = reader.cachedAtStart.range(containing: position)
                if let cached {
                    upper = min(upper, cached.upperBound)
                } else if let next = reader.cachedAtStart.firstOffset(atOrAfter: position) {
                    upper = min(upper, next)
                }
                return .bytes(ByteRange(position, upper), file, fromOrigin: cached == nil)
            }
            if joinableFetch(at: position) == nil, lastRefresh.duration(to: .now) > .seconds(1) {
                // Another process sharing the directory may have fetched these bytes meanwhile.
                try await refreshFromIndex()
                continue
            }
            let fetchID = joinableFetch(at: position) ?? startFetch(at: position, readerEnd: reader.end)
            readers[id]?.waitingOn = fetchID
            await wait(reader: id)
        }
    }

    /// Adds the ranges other processes recorded for this version since the session opened.
    private func refreshFromIndex() async throws {
        lastRefresh = .now
        let id = record.id
        let recorded = try await index.ranges(of: id)
        guard record.id == id else { return }
        for range in recorded.ranges { available.insert(range) }
    }

    private var needsValidation: Bool {
        guard record.info.length != nil, !available.isEmpty else { return false }
        guard let validatedAt else { return true }
        return validatedAt.duration(to: .now) > configuration.revalidationInterval
    }

    /// Suspends reader `id` until the session's state changes (bytes, failure, cancellation).
    private func wait(reader id: Int) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if Task.isCancelled || readers[id] == nil {
                    continuation.resume()
                } else {
                    waiters[id] = continuation
                }
            }
        } onCancel: {
            Task { await self.wake(reader: id) }
        }
    }

    private func wake(reader id: Int) {
        waiters.removeValue(forKey: id)?.resume()
    }

    /// Wakes every waiting reader to look at the new state.
    func wakeAll() {
        let current = waiters
        waiters.removeAll()
        for continuation in current.values { continuation.resume() }
    }

    // MARK: Fetch bookkeeping

    /// The in-flight fetch that will write `position` soon, if any.
    private func joinableFetch(at position: Int64) -> Int? {
        fetches.values.first { fetch in
            fetch.generation == generation && fetch.frontier <= position
                && position - fetch.frontier <= joinDistance(of: fetch) && position < limit(of: fetch)
        }?.id
    }

    /// How far ahead of its frontier `fetch` is worth waiting for: what it delivers in
    /// `joinWait` at the rate seen so far, and at least `joinDistance`.
    private func joinDistance(of fetch: Fetch) -> Int64 {
        let elapsed = fetch.startedAt.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        guard seconds > 0.05 else { return configuration.joinDistance }
        let rate = Double(fetch.frontier - fetch.start) / seconds
        let wait =
            Double(configuration.joinWait.components.seconds) + Double(configuration.joinWait.components.attoseconds)
            / 1e18
        return max(configuration.joinDistance, Int64(rate * wait))
    }

    /// Where `fetch` must stop: its requested end, the resource's end, the next cached byte, or
    /// the frontier of another fetch ahead of it, whichever comes first.
    func limit(of fetch: Fetch) -> Int64 {
        var limit = min(fetch.requestedEnd ?? Int64.max, record.info.length ?? Int64.max)
        if let next = available.firstOffset(atOrAfter: fetch.frontier) { limit = min(limit, next) }
        for other in fetches.values where other.id != fetch.id && other.generation == fetch.generation {
            if other.frontier > fetch.frontier { limit = min(limit, other.frontier) }
        }
        return max(limit, fetch.frontier)
    }

    /// Whether some reader still needs bytes `fetch` would write.
    private func isWanted(_ fetch: Fetch) -> Bool {
        let limit = limit(of: fetch)
        return readers.values.contains { reader in
            reader.position < limit && (reader.end ?? Int64.max) > fetch.frontier
        }
    }

    /// Fetches whose readers left are not cancelled: each finishes the bounded request it is in
    /// (see ``fetch(_:wroteUpTo:)``), so the bytes the origin already sent are kept.
    func cancelUnwantedFetches() {}

    /// Starts a fetch of the gap at `position`, up to the reader's end or the next known bytes.
    private func startFetch(at position: Int64, readerEnd: Int64?) -> Int {
        nextID += 1
        let id = nextID
        let probe = Fetch(id: id, generation: generation, start: position, frontier: position, requestedEnd: readerEnd)
        let end = limit(of: probe)
        var fetch = Fetch(
            id: id,
            generation: generation,
            start: position,
            frontier: position,
            requestedEnd: end == Int64.max ? nil : end
        )
        let request = originRequest(from: position, to: fetch.requestedEnd, span: configuration.firstFetchSpan)
        fetch.task = Task { await self.run(fetchID: id, request: request) }
        fetches[id] = fetch
        logger.debug(
            "fetch started",
            metadata: ["key": "\(key)", "range": "\(position)-\(fetch.requestedEnd.map { String($0 - 1) } ?? "")"]
        )
        return id
    }

    /// The request for `[position, end)`, at most `span` bytes of it.
    private func originRequest(from position: Int64, to end: Int64?, span: Int64) -> OriginRequest {
        let spanEnd = position > Int64.max - span ? Int64.max : position + span
        let last = min(end ?? Int64.max, spanEnd) - 1
        return OriginRequest(
            url: url,
            range: (position, last),
            headers: headers,
            ifRange: record.info.length == nil ? nil : record.info.ifRangeValidator
        )
    }

    /// The next request of fetch `id` after one ended at its frontier: `span` more bytes, if a
    /// reader still wants them and the fetch has not reached its limit.
    func nextRequest(of id: Int, span: Int64) -> OriginRequest? {
        guard let fetch = fetches[id], fetch.generation == generation, isWanted(fetch) else { return nil }
        let limit = limit(of: fetch)
        guard fetch.frontier < limit else { return nil }
        return originRequest(from: fetch.frontier, to: limit == Int64.max ? nil : limit, span: span)
    }

    /// Records that fetch `id` wrote bytes up to `newFrontier`, and says how it goes on.
    func fetch(_ id: Int, wroteUpTo newFrontier: Int64) -> FetchProgress {
        guard var fetch = fetches[id], fetch.generation == generation else { return .stop }
        if newFrontier > fetch.frontier {
            available.insert(ByteRange(fetch.frontier, newFrontier))
            fetch.frontier = newFrontier
            fetches[id] = fetch
            wakeAll()
        }
        return isWanted(fetch) ? .proceed(limit: limit(of: fetch)) : .finishRequest(limit: limit(of: fetch))
    }

    /// Removes fetch `id`, handing `error` to the readers that waited on it.
    func fetchEnded(_ id: Int, error: Error?) {
        guard fetches.removeValue(forKey: id) != nil else { return }
        if let error, !(error is CancellationError) {
            let failure =
                error as? StreamCacheError
                ?? StreamCacheError(.originUnreachable, "origin fetch failed: \(error)")
            logger.debug("fetch failed", metadata: ["key": "\(key)", "error": "\(failure.message)"])
            for (readerID, reader) in readers where reader.waitingOn == id {
                readers[readerID]?.error = failure
                readers[readerID]?.waitingOn = nil
            }
        }
        wakeAll()
        notifyIfIdle()
    }

    // MARK: Versions

    /// Moves to a new version of the resource described by `newInfo`: a new index row and file.
    ///
    /// Fetch `survivor` (the one that saw the new version) carries on in the new generation.
    func replaceVersion(with newInfo: ContentInfo, survivor: Int?) async throws {
        if let reset {
            try await reset.value
            return
        }
        logger.info("resource changed at origin; discarding cached bytes", metadata: ["key": "\(key)"])
        generation += 1
        available = RangeSet()
        for (id, fetch) in fetches where id != survivor {
            fetch.task?.cancel()
            fetches[id]?.generation = -1
        }
        if let survivor { fetches[survivor]?.generation = generation }
        for readerID in readers.keys { readers[readerID]?.cachedAtStart = RangeSet() }
        for (readerID, reader) in readers where reader.hasDelivered {
            readers[readerID]?.error = StreamCacheError(
                .resourceChanged,
                "\(url.absoluteString) changed at the origin during the read"
            )
        }
        let oldRecord = record
        let task = Task {
            let newRecord = try await index.replaceVersion(
                of: oldRecord.id,
                key: key,
                url: url.absoluteString,
                info: newInfo
            )
            let newFile = try await CacheFile.openLocked(path: directory.dataPath(id: newRecord.id))
            unlink(directory.dataPath(id: oldRecord.id))
            self.install(record: newRecord, file: newFile)
        }
        reset = task
        defer { reset = nil }
        try await task.value
        wakeAll()
    }

    private func install(record: ResourceRecord, file: CacheFile) {
        self.record = record
        self.file = file
        validatedAt = .now
    }

    /// Stores content information learned from the first response.
    func learn(_ newInfo: ContentInfo) async throws {
        record.info = newInfo
        validatedAt = .now
        try await index.update(id: record.id, info: newInfo)
        wakeAll()
    }

    func notifyIfIdle() {
        if readers.isEmpty && fetches.isEmpty { onIdle(key) }
    }

    /// Waits until every fetch has ended and recorded what it wrote.
    func drain() async {
        while let fetch = fetches.values.first {
            await fetch.task?.value
        }
    }

    var isIdle: Bool { readers.isEmpty && fetches.isEmpty && validation == nil && reset == nil }
}
