import Foundation
import Logging

/// All reads of one resource in this process: one per cache key, shared by every reader.
///
/// The decisions are the ``ResourceStateMachine``'s; the session feeds it events as they happen
/// and carries out what it says: hands readers spans of the cache file, runs fetches and writes
/// their bytes, makes them durable and records them, asks the origin whether the version is
/// current, and moves to a new index row and file when the origin replaced the resource.
actor ResourceSession {
    let key: String
    /// The URL and headers the newest reader opened the resource with: fetches ask the origin
    /// with them.
    let newest: NewestRequest
    nonisolated var url: URL { newest.url }
    nonisolated var headers: OriginHeaders { newest.headers }
    let environment: SessionEnvironment
    nonisolated var index: CacheIndex { environment.index }
    nonisolated var directory: CacheDirectory { environment.directory }
    nonisolated var origin: RedirectingOrigin { environment.origin }
    nonisolated var logger: Logger { environment.logger }

    /// The index row of the current version.
    var record: ResourceRecord
    /// The data file of the current version.
    var file: CacheFile
    var machine: ResourceStateMachine
    /// What the fetches wrote last, for readers at their edge.
    var recent = RecentBytes(limit: 1 << 20)
    /// The checksums of blocks the fetches wrote whole, summed as they wrote them.
    var fetchedSums = FetchedBlockSums()
    /// The answer that brought version `generation` whole, for its first fetch (``CheckedBody``).
    var checkedBody: (generation: Int, body: CheckedBody)?
    private let waiters = ReaderWaiters()
    /// Whole-body fetches holding their body for a reader to come (``readerCame(for:)``), by
    /// fetch id: woken when a reader waits for bytes, and for a shutdown.
    let heldFetches = ReaderWaiters()
    /// The running fetches. Owned by the session: each removes itself when it ends, ``drain()``
    /// awaits them, and a version change cancels the stale ones.
    var fetchTasks: [Int: Task<Void, Never>] = [:]
    /// The check of the version made while readers go on, if one runs.
    var backgroundCheck: Task<Void, Never>?
    /// Bodies of answers the cache may not keep, by the reader they go to (``RelayedBody``),
    /// until it takes them; and by the fetch that sends them, until it starts to.
    var relays: [Int: RelayedBody] = [:]
    var relayOfFetch: [Int: RelayedBody] = [:]
    /// Whether the session is draining for a shutdown: nothing waits for a reader any more.
    var draining = false
    /// Whether the engine has closed the session: it publishes nothing more.
    private var isClosed = false
    /// When the session last looked for a version another process stored.
    var lastAdoptionCheck: ContinuousClock.Instant?
    /// Whether the session has asked the index for other processes' claims since it opened: a
    /// span of the file is handed out only once it knows whether another process writes it.
    var askedForOtherWriters = false
    /// Whether another process claimed bytes of the resource when the session asked; its fetch
    /// may write the file for as long as the session lives.
    var otherWriterSeen = false
    /// When the session last said in the index that a reader waits for another process's
    /// whole-body stream (``sayWant(at:)``).
    private var lastWant: ContinuousClock.Instant?
    /// Called when the session has neither readers nor fetches.
    private let onIdle: @Sendable (String) -> Void

    private init(
        key: String,
        url: URL,
        headers: OriginHeaders,
        environment: SessionEnvironment,
        record: ResourceRecord,
        file: CacheFile,
        machine: ResourceStateMachine,
        onIdle: @escaping @Sendable (String) -> Void
    ) {
        self.key = key
        self.newest = NewestRequest(url: url, headers: headers)
        self.environment = environment
        self.record = record
        self.file = file
        self.machine = machine
        self.onIdle = onIdle
    }

    /// A reader opened the resource with `url` and `headers`: the fetches started from now on
    /// use them, and the index records the URL as the one used last.
    func opened(with url: URL, headers: OriginHeaders) {
        guard newest.update(url: url, headers: headers) else { return }
        record.url = url.absoluteString
        notice(tokenDigest: environment.configuration.tokenDigest(url))
        let (index, id, text) = (index, record.id, url.absoluteString)
        Task { try? await index.setURL(text, id: id) }
    }

    /// A reader came with a URL whose left-out parameter values have `digest`: if the cached
    /// bytes came with others, the next reader's check is proven by bytes, and until then ranges
    /// join them only as bytes prove (``ResourceStateMachine/bytesMustProve``). With nothing
    /// cached yet, the version is the new values'.
    func notice(tokenDigest digest: String?) {
        guard digest != record.tokenDigest else { return }
        guard machine.written.isEmpty else {
            machine.otherTokensCame()
            return
        }
        record.tokenDigest = digest
        let (index, id) = (index, record.id)
        Task { try? await index.setTokenDigest(digest, id: id) }
    }

    /// Opens the session for `key`: finds or creates the index row, opens and locks its data file,
    /// and drops any recorded range the file does not actually hold.
    static func open(
        key: String,
        url: URL,
        headers: OriginHeaders,
        environment: SessionEnvironment,
        onIdle: @escaping @Sendable (String) -> Void
    ) async throws -> ResourceSession {
        while true {
            let index = environment.index
            let digest = environment.configuration.tokenDigest(url)
            let created = try await index.resource(
                forKey: key,
                creatingWithURL: url.absoluteString,
                tokenDigest: digest
            )
            let path = environment.directory.dataPath(id: created.id)
            let file = try await CacheFile.openLocked(path: path)
            // Holding the shared lock, the row can no longer be evicted; check it survived until now.
            guard let (record, indexed) = try await index.resource(id: created.id, key: key) else {
                unlink(path)
                continue
            }
            if record.url != url.absoluteString { try? await index.setURL(url.absoluteString, id: record.id) }
            var recorded = indexed
            var info = record.info
            if !isVariant(info, requestedWith: headers, at: url) {
                // Stored for a request whose fields the response varies on had other values
                // (RFC 9111 §4.1): not this request's; one variant is kept per resource.
                recorded = ByteRangeSet()
                info = ContentInfo()
                try? await index.setRanges(recorded, of: record.id)
            }
            var present = recorded.clamped(below: try file.size())
            // Both best-effort, so a full disk does not keep cached bytes from being served: the
            // next open clamps the ranges again, and the access time only orders eviction.
            if present != recorded { try? await index.setRanges(present, of: record.id) }
            if let seen = record.fileState, let state = file.state(), state != seen {
                // Changed since the index last saw it (by something else, or by a write never
                // recorded): read against its checksums before a byte of it is served.
                present = await verify(file, of: record, holding: present, state: state, environment: environment)
            }
            environment.accessTimes.note(record.id)
            var machine = ResourceStateMachine(
                info: info,
                recorded: present,
                freshUntil: Self.freshUntil(of: info, configuration: environment.configuration)
                    ?? Self.staleSince(of: info, configuration: environment.configuration),
                now: .now,
                settings: ResourceStateMachine.Settings(environment.configuration, url: url)
            )
            // Only a resource nothing is known of asks (``ResourceStateMachine/rangeSupport``).
            if info.length == nil { machine.originRangesAre(environment.originRanges.support(of: url)) }
            // Bytes that came with other values of the parameters the key leaves out.
            if record.tokenDigest != digest, !present.isEmpty { machine.otherTokensCame() }
            return ResourceSession(
                key: key,
                url: url,
                headers: headers,
                environment: environment,
                record: record,
                file: file,
                machine: machine,
                onIdle: onIdle
            )
        }
    }

    /// What the session knows about the resource.
    var info: ContentInfo { machine.info }

    /// Whether a stale copy is served because the origin could not be reached.
    var isServingStale: Bool { machine.isServingStale }

    /// Until when `info`, as stored, is fresh (RFC 9111 §4.2), on this process's clock; `nil` if
    /// it is stale already.
    static func freshUntil(of info: ContentInfo, configuration: CacheConfiguration) -> ContinuousClock.Instant? {
        guard info.stored.receivedAt > 0 else { return nil }
        let remaining = ResourceStateMachine.remainingFreshness(
            of: info,
            at: Date().timeIntervalSince1970,
            heuristicLimit: configuration.heuristicFreshnessLimit,
            cap: configuration.revalidationInterval,
            shared: configuration.isShared
        )
        guard remaining > .zero else { return nil }
        return ContinuousClock.now.advanced(by: remaining)
    }

    /// When `info`, as stored and stale already, went stale, on this process's clock, if it is
    /// still within its `stale-while-revalidate` window (the machine reads it on while it checks
    /// it); `nil` otherwise.
    static func staleSince(of info: ContentInfo, configuration: CacheConfiguration) -> ContinuousClock.Instant? {
        let control = info.stored.cacheControl(shared: configuration.isShared)
        guard info.stored.receivedAt > 0, let window = control.staleWhileRevalidate else { return nil }
        let remaining = info.stored.remainingFreshness(
            at: Date().timeIntervalSince1970,
            heuristicLimit: ResourceStateMachine.seconds(configuration.heuristicFreshnessLimit),
            cap: ResourceStateMachine.seconds(configuration.revalidationInterval),
            shared: configuration.isShared
        )
        guard remaining <= 0, remaining + Double(window) > 0 else { return nil }
        return ContinuousClock.now.advanced(by: .milliseconds(Int64(remaining * 1000)))
    }

    /// Whether every byte of the current version is in the cache file.
    var isComplete: Bool { machine.info.isComplete(with: machine.written) }

    /// Whether every byte of the current version is cached and fresh (RFC 9111 §4.2).
    var isCompleteAndFresh: Bool { machine.isCompleteAndFresh(now: .now) }

    /// Whether nothing is going on in the session.
    var isIdle: Bool { machine.isIdle }

    /// Whether the session's version was stored for other values of the request fields it
    /// varies on than `headers` send for `url` (RFC 9111 §4.1): a request with them is for a
    /// session opened anew, which fetches its own variant.
    func holdsAnotherVariant(than headers: OriginHeaders, at url: URL) -> Bool {
        machine.info.length != nil && !Self.isVariant(machine.info, requestedWith: headers, at: url)
    }

    /// Reads the checksummed blocks of `file` that `present` holds and forgets those that do not
    /// match, so they are fetched again.
    ///
    /// - Returns: the bytes still present.
    private static func verify(
        _ file: CacheFile,
        of record: ResourceRecord,
        holding present: ByteRangeSet,
        state: DataFileState,
        environment: SessionEnvironment
    ) async -> ByteRangeSet {
        guard
            let check = try? await environment.index.check(
                file,
                of: record.id,
                length: record.info.length,
                holding: present,
                state: state
            )
        else { return present }
        if !check.bad.isEmpty {
            environment.logger.warning(
                "cached bytes changed behind the cache's back; fetching them again",
                metadata: ["url": "\(Credentials.redacted(record.url))", "blocks": "\(check.bad.count)"]
            )
        }
        return check.kept
    }

    /// Whether the session lost its version (a replacement failed): its readers fail, and the
    /// engine opens another session for the next request.
    var isBroken: Bool {
        if case .broken = machine.phase { return true }
        return false
    }

    // MARK: Readers

    /// Registers a reader of `[offset, end)` (`end == nil`: to the end of the resource).
    func addReader(offset: Int64, end: Int64?, revalidates: Bool = false, readsAhead: Bool = false) -> Int {
        // A session opened on a version confirmed before it closed last is servable at once.
        defer { publishServable() }
        return machine.addReader(offset: offset, end: end, revalidates: revalidates, readsAhead: readsAhead)
    }

    /// Forgets reader `id`; fetches only it wanted finish the request they are in and stop.
    func removeReader(_ id: Int) {
        relays.removeValue(forKey: id)?.close()
        // A request still waiting for its answer (perhaps for a connection) is given up at once.
        for fetch in machine.removeReader(id) { fetchTasks[fetch]?.cancel() }
        waiters.wakeAll()
        notifyIfIdle()
    }

    /// The next span of bytes for reader `id` at `position`, waiting for the origin if needed:
    /// bytes a fetch has just written from memory, unless `preferringFile`, else from the file.
    ///
    /// - Throws: the error of the fetch the reader waited on, `resourceChanged` if the resource was
    ///   replaced after the reader received bytes, or `CancellationError`.
    func nextStep(reader id: Int, at position: Int64, preferringFile: Bool = false) async throws -> ReadStep {
        while true {
            try Task.checkCancellation()
            // A proxy's copy of coded content (``CacheConfiguration/keepsEncodedContent``) is not
            // the content this reader needs.
            if !environment.configuration.keepsEncodedContent, let coding = machine.info.contentCoding {
                throw StreamCacheError(
                    .encodedBody,
                    "the cached copy of \(url.originName) is Content-Encoding: \(coding), not the content itself"
                )
            }
            // One look at the file per step: replaced by another process, or cut short?
            let status = file.status()
            if status?.isUnlinked == true, lastAdoptionCheck.map({ $0.duration(to: .now) > .seconds(1) }) ?? true {
                // Another process replaced or removed the resource: read the version it stored.
                await adoptCurrentVersion()
                continue
            }
            let epoch = waiters.epoch
            switch machine.read(id, at: position, now: .now) {
            case .cancelled:
                throw CancellationError()
            case .deliver(let range, let fromOrigin):
                // A span of a file another process may be writing: first learn whether one is
                // (before the origin's bytes are charged to this step).
                if preferringFile, !askedForOtherWriters, !machine.isWhollyRecorded {
                    askedForOtherWriters = true
                    let state = try? await index.sharedState(
                        of: record.id,
                        rules: environment.claimRules,
                        withHead: false
                    )
                    otherWriterSeen = state.map { !$0.foreign.isEmpty || $0.foreignStream != nil } ?? false
                    continue
                }
                let charged = machine.takeCharge(id)
                if !preferringFile, let bytes = recent.bytes(startingAt: range, generation: machine.generation) {
                    return .memory(bytes, offset: range.lowerBound, fromOrigin: fromOrigin, originBytes: charged)
                }
                // A file cut short: read again what is missing (each pass forgets bytes, so it ends).
                if status?.holds(range) != true, await forgetMissingBytes() { continue }
                // Changed by something else since this session left it, or may be while the span
                // is sent (another process's fetch writes the file; a server's watch of a span
                // would end the answer at its first write): checked as read, and sent from memory.
                // Judged without waiting on a write under way (``CacheFile/isTrustedNow()``).
                if status != nil, otherWriterSeen || machine.isWrittenElsewhere || !file.isTrustedNow() {
                    guard let span = try await checkedStep(range, fromOrigin: fromOrigin, originBytes: charged) else {
                        continue
                    }
                    return span
                }
                return .bytes(range, file, fromOrigin: fromOrigin, originBytes: charged)
            case .end:
                return .end(originBytes: machine.takeCharge(id))
            case .passThrough(let known):
                if known != nil {
                    logger.notice(
                        "the origin's ETag changed with nothing else; the read goes on uncached",
                        metadata: ["key": "\(key)", "offset": "\(position)"]
                    )
                }
                return .passThrough(against: known)
            case .fail(let error):
                throw error
            case .wait:
                // Perhaps for what a held body brings: it reads on if so.
                heldFetches.wakeAll()
                await waiters.wait(id, unlessChangedSince: epoch)
            case .waitForStream(let position, let streamAt):
                logger.info(
                    "the origin ignores Range: a read at byte \(position) waits for its one stream, at byte \(streamAt)",
                    metadata: ["key": "\(key)"]
                )
                heldFetches.wakeAll()
                await waiters.wait(id, unlessChangedSince: epoch)
            case .startFetch(let request):
                start(request)
                await waiters.wait(id, unlessChangedSince: epoch)
            case .validate(let known, let bytesOnly):
                await validate(known, bytesOnly: bytesOnly)
            case .checkInBackground(let known):
                backgroundCheck = Task { await self.checkInBackground(known) }
            case .refresh(let generation):
                await refresh(generation: generation)
            case .awaitOtherProcess(let generation):
                if machine.awaitsForeignStream(at: position) { await sayWant(at: position) }
                try await Task.sleep(for: environment.configuration.sharedPollInterval)
                await refresh(generation: generation)
            }
        }
    }

    /// Says in the index, at most twice a second, that a reader waits at `position` for
    /// another process's whole-body stream: that process reads it on while the want stands,
    /// rather than end it once its own readers have their bytes (``CacheIndex/want(resource:from:owner:)``).
    private func sayWant(at position: Int64) async {
        let now = ContinuousClock.now
        if let lastWant, lastWant.duration(to: now) < .milliseconds(500) { return }
        lastWant = now
        try? await index.want(resource: record.id, from: position, owner: environment.mark.token)
    }

    /// The cache file is shorter than the ranges recorded of it (cut behind the cache's back):
    /// the bytes past its end are forgotten, in the index too, and fetched again when read.
    ///
    /// - Returns: whether any were.
    private func forgetMissingBytes() async -> Bool {
        guard let status = file.status(), !status.isUnlinked, let end = machine.written.ranges.last?.upperBound,
            end > status.size
        else { return false }
        let size = status.size
        logger.warning(
            "the cache file is shorter than its index says; fetching the missing bytes again",
            metadata: ["key": "\(key)", "file": "\(file.path)", "size": "\(size)"]
        )
        machine.forget(from: size)
        wakeAll()
        try? await index.setRanges(machine.recorded, of: record.id)
        return true
    }

    /// Marks the stored version stale, here and in the index: the next read asks the origin
    /// first (``CacheEngine/relay(_:_:)``).
    func invalidate() async {
        machine.invalidate()
        publishServable()
        try? await index.update(id: record.id, info: machine.info)
    }

    /// Wakes every waiting reader to look at the new state, and tells servers what they may now
    /// send without a read.
    func wakeAll() {
        waiters.wakeAll()
        publishServable()
    }

    /// Publishes the written bytes of the current version as a ``ServableFile`` while the origin's
    /// word on it is fresh; nothing while the session validates, replaces the version or is broken.
    private func publishServable() {
        guard !isClosed else { return }
        guard machine.phase == .ready, machine.info.length != nil, !machine.written.isEmpty,
            let freshUntil = machine.freshUntil, !machine.control(of: machine.info).noCache, !machine.isServingStale
        else {
            // The session is the key's only one while open: an entry of an older file goes too.
            environment.published.publish(nil, for: key)
            return
        }
        let servable = ServableFile(
            file: file,
            info: machine.info,
            written: machine.written,
            freshUntil: freshUntil,
            tokenDigest: record.tokenDigest
        )
        environment.published.publish(servable, for: key)
    }

    /// The relayed answer for reader `id`, if a fetch handed it one (``RelayedBody``): its bytes
    /// `[position, end)`.
    func relay(for id: Int, from position: Int64, end: Int64?) -> (bytes: PassThrough, info: ContentInfo)? {
        guard let relay = relays.removeValue(forKey: id) else { return nil }
        let known = relay.info
        let bytes = relay.read(from: position, end: end) { [self] next in
            // The answer covered the first bytes asked for: the rest comes as any uncached read's.
            guard next < min(end ?? Int64.max, known.length ?? Int64.max) else { return nil }
            return uncached(from: next, end: end, known: known)
        }
        return (bytes, known)
    }

    /// Stops servers sending the resource without a read; call when the session closes.
    func withdrawServable() {
        isClosed = true
        environment.published.withdraw(key, file: file)
    }

    func notifyIfIdle() {
        if machine.isIdle { onIdle(key) }
    }

    /// Deletes the index row and data file of a resource the session learned nothing about (an
    /// origin that answered 404, refused or never answered), so failures leave no trace. Call
    /// only on an idle session about to close.
    ///
    /// - Returns: whether the resource was deleted.
    func discardIfEmpty() async -> Bool {
        guard machine.isIdle, machine.written.isEmpty, machine.info.length == nil else { return false }
        // Another process with the file open may still fetch it: then it stays.
        guard file.lockExclusively() else { return false }
        do {
            // Not the caller's to cancel: a shutdown cancels the engine's chores, one of which
            // may be this close, and a cancelled delete left the row of a failed fetch behind.
            try await Task { [index, id = record.id] in try await index.delete(id: id) }.value
        } catch {
            return false
        }
        unlink(file.path)
        machine.replacementFailed(StreamCacheError(.storage, "the resource was removed"))
        return true
    }

    /// Waits until every fetch has ended and recorded what it wrote.
    func drain() async {
        // No reader comes any more: a body held for one ends now (``readerCame(for:)``).
        draining = true
        heldFetches.wakeAll()
        while let task = fetchTasks.values.first {
            await task.value
        }
    }
}
