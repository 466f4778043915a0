extension ResourceStateMachine {
    /// What a reader does next.
    enum ReadAction: Sendable {
        /// Read `range` from the cache file; `fromOrigin` if it arrived after the reader came.
        case deliver(ByteRange, fromOrigin: Bool)
        /// The read is complete.
        case end
        /// Hand the reader this error.
        case fail(StreamCacheError)
        /// The reader left (or never came).
        case cancelled
        /// Wait until the state changes, then ask again.
        case wait
        /// Read on straight from the origin, from the reader's position, nothing kept: the
        /// response may not be stored (`no-store`, `Vary: *`; `nil`: the answer must be of the
        /// current version), or the origin's entity tag changed under the reader (the answer
        /// must be of this version, tag aside).
        case passThrough(against: ContentInfo?)
        /// Say once that the origin ignores `Range` and the reader at `position` waits for the
        /// whole-body stream, now at `streamAt`, to reach it; then wait as for ``wait``.
        case waitForStream(position: Int64, streamAt: Int64)
        /// Start this fetch, then wait.
        case startFetch(FetchRequest)
        /// Ask the origin whether `info` is still current, report ``validated(_:now:)``, ask again.
        case validate(ContentInfo, bytesOnly: Bool)
        /// Ask the origin whether the cached version is current while this reader and the
        /// others go on with it: it is stale, within its `stale-while-revalidate` window.
        case checkInBackground(ContentInfo)
        /// Read the index's ranges and claims of generation `generation`, report
        /// ``refreshed(_:generation:now:)``, ask again.
        case refresh(generation: Int)
        /// Another process fetches the bytes, or has asked the origin first and its answer head
        /// is awaited: wait a moment (or until the state changes), then do as for
        /// ``refresh(generation:)``.
        case awaitOtherProcess(generation: Int)
    }

    /// Registers a reader of `[offset, end)` (`end == nil`: to the end of the resource).
    ///
    /// With `revalidates`, the version is checked with the origin before the reader gets a cached
    /// byte, however recently it was (a conditional request: a `304` costs no body). With
    /// `readsAhead`, it joins a fetch only within the join distance (``Reader/readsAhead``).
    mutating func addReader(offset: Int64, end: Int64?, revalidates: Bool = false, readsAhead: Bool = false) -> Int {
        let id = makeID()
        var reader = Reader(start: offset, position: offset, end: end, cachedAtStart: written)
        reader.revalidates = revalidates
        reader.readsAhead = readsAhead
        readers[id] = reader
        return id
    }

    /// Forgets reader `id`. Fetches only it wanted finish the request they are in and stop; those
    /// still waiting for their answer are given up (no byte is on its way yet).
    ///
    /// - Returns: the fetches to cancel.
    @discardableResult
    mutating func removeReader(_ id: Int) -> [Int] {
        unattributed += readers[id]?.charged ?? 0
        readers[id] = nil
        return fetches.values.filter { fetch in
            guard case .requesting = fetch.state, fetch.generation == generation else { return false }
            return !isWanted(fetch)
        }.map(\.id)
    }

    /// Whether a reader wants a byte of `range` next: bytes a fetch has just written there are
    /// worth keeping in memory for it (``RecentBytes``); a reader further behind reads the file.
    func isAwaited(_ range: ByteRange) -> Bool {
        readers.values.contains { range.lowerBound <= $0.position && $0.position < range.upperBound }
    }

    /// Reader `id` wants the bytes at `position`.
    mutating func read(_ id: Int, at position: Int64, now: Instant) -> ReadAction {
        guard var reader = readers[id] else { return .cancelled }
        defer { checkInvariants() }
        if let failure = reader.failure {
            reader.failure = nil
            reader.waitingOn = nil
            readers[id] = reader
            return .fail(failure)
        }
        reader.position = position
        reader.waitingOn = nil
        readers[id] = reader
        if let known = reader.uncachedAgainst { return .passThrough(against: known) }
        switch phase {
        case .broken(let error): return .fail(error)
        case .validating, .replacing: return .wait
        case .ready: break
        }
        if reader.relayed { return .passThrough(against: nil) }
        if !reader.checkedVersion {
            // Once per reader: the version it starts on is confirmed if the last word is old.
            readers[id]?.checkedVersion = true
            let forced = reader.revalidates && info.length != nil && !written.isEmpty
            if forced || needsValidation(now: now) || (bytesMustProve && !written.isEmpty) {
                if !forced, !bytesMustProve, servesStaleWhileChecking(now: now) {
                    if !checksInBackground {
                        checksInBackground = true
                        return .checkInBackground(info)
                    }
                } else {
                    phase = .validating(forced: forced)
                    return .validate(info, bytesOnly: bytesMustProve)
                }
            }
        }
        let end = min(reader.end ?? Int64.max, info.length ?? Int64.max)
        if position >= end { return .end }
        if mayNotStore(info) {
            // Each read of a response the cache may not keep is an answer of its own: a request
            // whose answer, head and body, goes to this reader (``AnswerAction/relay``).
            let request = startFetch(at: position, end: reader.end, for: id, now: now)
            readers[id]?.waitingOn = request.fetch
            return .startFetch(request)
        }
        if let present = written.range(containing: position) {
            var upper = min(present.upperBound, end)
            // A span is all cached-at-start or all from the origin, so callers can count both.
            let cached = reader.cachedAtStart.range(containing: position)
            if let cached {
                upper = min(upper, cached.upperBound)
            } else if let next = reader.cachedAtStart.firstOffset(atOrAfter: position) {
                upper = min(upper, next)
            }
            readers[id]?.hasDelivered = true
            return .deliver(ByteRange(position, upper), fromOrigin: cached == nil)
        }
        if let stream = wholeStream(before: position) {
            // The origin ignores `Range`: its one stream brings every byte; another request would
            // have it send everything before this byte again.
            readers[id]?.waitingOn = stream.id
            if !reader.toldOfStream, position - stream.next > joinDistance(of: stream, now: now) {
                readers[id]?.toldOfStream = true
                return .waitForStream(position: position, streamAt: stream.next)
            }
            return .wait
        }
        if let fetch = joinableFetch(at: position, readsAhead: reader.readsAhead, now: now) {
            readers[id]?.waitingOn = fetch
            return .wait
        }
        // A fetch is writing these bytes right now.
        if writing.contains(position) { return .wait }
        // Another process sharing the directory fetches them: they appear in the index as it records them.
        if isForeign(position) { return .awaitOtherProcess(generation: generation) }
        if refreshedAt.duration(to: now) > settings.refreshInterval {
            // Another process sharing the directory may have fetched these bytes meanwhile.
            refreshedAt = now
            return .refresh(generation: generation)
        }
        if info.length == nil, rangeSupport != .honoured, let fetch = firstAnswerAwaited() {
            // An origin that ignores `Range` sends this byte in the answer already asked for; one
            // not known yet says in that answer's head whether it does.
            readers[id]?.waitingOn = fetch
            return .wait
        }
        if info.length == nil, let action = awaitFirstHead(reader: id, now: now) { return action }
        let request = startFetch(at: position, end: reader.end, for: id, now: now)
        readers[id]?.waitingOn = request.fetch
        return .startFetch(request)
    }

    /// What reader `id` does while nothing is known of the resource and another process has
    /// asked the origin for some of it: that answer says whether the origin honours `Range`.
    /// One that does not sends every byte from the start to that request, so a request of this
    /// process now would have it send them all again. The reader waits for the other's answer
    /// head to reach the index (``refreshed(_:generation:now:)``), at most
    /// ``Settings/headWait``; `nil`: no other process asks, or the wait is over.
    mutating func awaitFirstHead(reader id: Int, now: Instant) -> ReadAction? {
        guard !foreign.isEmpty || foreignStream != nil, let reader = readers[id] else { return nil }
        let since = reader.awaitsHeadSince ?? now
        guard since.duration(to: now) < settings.headWait else { return nil }
        readers[id]?.awaitsHeadSince = since
        return .awaitOtherProcess(generation: generation)
    }

    /// This process's fetch of the current version whose request awaits the resource's first
    /// answer head, if any: with an origin that ignores `Range`, that answer brings every byte.
    private func firstAnswerAwaited() -> Int? {
        fetches.values.filter { fetch in
            guard fetch.generation == generation, case .requesting = fetch.state else { return false }
            return true
        }.map(\.id).min()
    }

    /// Whether the cached version must be checked with the origin before a reader gets its bytes:
    /// it is stale, or marked `no-cache` (RFC 9111 §4.2, §5.2.2.4).
    private func needsValidation(now: Instant) -> Bool {
        guard info.length != nil, !written.isEmpty else { return false }
        guard let freshUntil, !control(of: info).noCache else { return true }
        return now >= freshUntil
    }

    /// Whether the stale cached version may be read while the origin is asked about it: within
    /// its `stale-while-revalidate` window (RFC 5861 §3), unless it must be checked first
    /// (`no-cache`, `must-revalidate`).
    private func servesStaleWhileChecking(now: Instant) -> Bool {
        let control = control(of: info)
        guard let freshUntil, let window = control.staleWhileRevalidate, !control.noCache, !control.mustRevalidate
        else { return false }
        return now < freshUntil.advanced(by: .seconds(window))
    }

    /// The whole-body fetch that will pass `position` and is the first to, if any.
    private func wholeStream(before position: Int64) -> Fetch? {
        fetches.values.filter { fetch in
            fetch.generation == generation && fetch.isWhole && !fetch.isEnding && fetch.next <= position
                && position < (info.length ?? Int64.max)
        }.max { $0.next < $1.next }
    }

    /// The in-flight fetch that will write `position` soon, if any: one whose next byte is close
    /// enough, or whose request already asks for `position` no more than `firstFetchSpan` ahead.
    /// Those bytes are on their way (a fast origin has sent them already): a fetch of its own
    /// would have the origin send them twice. A reader that `readsAhead` waits only for a fetch
    /// close enough: its own fetch cuts the other's request where it starts, at the cost of what
    /// that request has in flight past it.
    private func joinableFetch(at position: Int64, readsAhead: Bool, now: Instant) -> Int? {
        fetches.values.first { fetch in
            guard fetch.generation == generation, !fetch.isEnding, !fetch.isWhole, fetch.next <= position,
                position < limit(of: fetch)
            else { return false }
            let distance = position - fetch.next
            return distance <= joinDistance(of: fetch, now: now)
                || (!readsAhead && position < requestedEnd(of: fetch) && distance <= settings.firstFetchSpan)
        }?.id
    }

    /// The end (exclusive) of what `fetch` has asked the origin for so far.
    func requestedEnd(of fetch: Fetch) -> Int64 {
        switch fetch.state {
        case .requesting(_, let last): last.map { $0 + 1 } ?? Int64.max
        case .receiving(let body): body.expectedEnd ?? Int64.max
        case .ending: fetch.next
        }
    }

    /// How far ahead of its next byte `fetch` is worth waiting for: what it delivers in
    /// `joinWait` at the rate seen so far, and at least `joinDistance`.
    func joinDistance(of fetch: Fetch, now: Instant) -> Int64 {
        let seconds = Self.seconds(fetch.startedAt.duration(to: now))
        guard seconds > 0.05 else { return settings.joinDistance }
        let rate = Double(fetch.next - fetch.start) / seconds
        return max(settings.joinDistance, Int64(rate * Self.seconds(settings.joinWait)))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Starts a fetch of the gap at `position`, up to the reader's end or the next known bytes.
    private mutating func startFetch(
        at position: Int64,
        end readerEnd: Int64?,
        for reader: Int,
        now: Instant
    )
        -> FetchRequest
    {
        let id = makeID()
        var fetch = Fetch(
            id: id,
            generation: generation,
            start: position,
            next: position,
            end: readerEnd,
            startedAt: now,
            span: settings.firstFetchSpan,
            state: .requesting(first: position, last: nil),
            account: reader,
            lastSync: now
        )
        // Its limit depends on the others only, so the request is known before it is added.
        let request = request(for: fetch)
        fetch.state = .requesting(first: request.first, last: request.last)
        fetches[id] = fetch
        return request
    }

    /// The next request of `fetch`: from its next byte, `span` bytes, not past its limit.
    func request(for fetch: Fetch) -> FetchRequest {
        let limit = limit(of: fetch)
        let spanEnd = fetch.next > Int64.max - fetch.span ? Int64.max : fetch.next + fetch.span
        let end = min(limit, spanEnd)
        return FetchRequest(
            fetch: fetch.id,
            first: fetch.next,
            last: end == Int64.max ? nil : end - 1,
            ifRange: ifRangeToSend,
            proof: proof(before: fetch.next)
        )
    }
}
