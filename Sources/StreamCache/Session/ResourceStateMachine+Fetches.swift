extension ResourceStateMachine {
    /// What a fetch does with an origin's answer head.
    struct AnswerAction: Sendable {
        /// Store this content information in the index (first learned, or range support lost).
        var store: ContentInfo?
        /// Move to a new version described so before going on (``versionReplaced(now:)``).
        var replaceVersion: ContentInfo?
        /// Fetches of the old version to cancel.
        var cancel: [Int] = []
        /// Whether to read the body; if not, the fetch ends.
        var readBody: Bool
        /// What the origin did with the request's range: `true`, answered it with the whole
        /// body (its other resources' first readers are told so, ``ignoresRange``); `false`,
        /// answered the range; `nil`, neither (a `304`, the resource's end, a new version sent
        /// for `If-Range`).
        var ignoresRange: Bool?
        /// A reader to hand the body to as it comes, written nowhere: an answer the cache may not
        /// keep goes to the reader it was asked for, never asked for again. `from`: the offset of
        /// the body's first byte.
        var relay: (reader: Int, from: Int64, info: ContentInfo)?
    }

    /// Where a chunk of the body goes.
    enum ChunkAction: Equatable, Sendable {
        /// Write `pieces` of the chunk (none: nothing), report ``wrote(_:now:)``, then read on or,
        /// if `endsFetch`, end the fetch.
        case write([Piece], endsFetch: Bool)
        /// Write nothing and end the fetch: it is stale, or no reader wants its bytes.
        case stop
        /// The origin broke its word: fail the fetch.
        case fail(StreamCacheError)
    }

    /// Bytes of a chunk to write: `count` of them from `skip` on, at `offset` of the file.
    struct Piece: Equatable, Sendable {
        let skip: Int
        let count: Int
        let offset: Int64
    }

    /// How a fetch goes on after its body ended.
    enum BodyEndAction: Sendable {
        /// Send the next request.
        case request(FetchRequest)
        /// End the fetch, after storing this content information if any (a length learned).
        case finish(store: ContentInfo?)
        /// The body was short: fail the fetch.
        case fail(StreamCacheError)
    }

    // MARK: Limits

    /// The end `fetch` may write up to on its own account: its requested end and the resource's.
    private func ownEnd(of fetch: Fetch) -> Int64 {
        min(fetch.end ?? Int64.max, info.length ?? Int64.max)
    }

    /// Where a fetch of a range must stop: its own end, the next byte written or being written,
    /// or the next byte of another fetch of a range ahead of it (of two at the same byte, the older
    /// one goes on). Other processes' claims cut a request before it is sent (``claimed``).
    func limit(of fetch: Fetch) -> Int64 {
        var limit = ownEnd(of: fetch)
        if let next = written.firstOffset(atOrAfter: fetch.next) { limit = min(limit, next) }
        if let next = writing.firstOffset(atOrAfter: fetch.next) { limit = min(limit, next) }
        for other in fetches.values
        where other.id != fetch.id && other.generation == fetch.generation && !other.isEnding && !other.isWhole
            && other.next < ownEnd(of: other)
            && (other.next > fetch.next || (other.next == fetch.next && other.id < fetch.id))
        {
            limit = min(limit, other.next)
        }
        return max(limit, fetch.next)
    }

    /// The bytes fetches of ranges other than `fetch` have asked for and not yet written: a
    /// whole-body fetch leaves them to those fetches.
    private func reserved(byOthersThan fetch: Fetch) -> ByteRangeSet {
        var reserved = ByteRangeSet()
        for other in fetches.values
        where other.id != fetch.id && other.generation == fetch.generation && !other.isEnding && !other.isWhole {
            let end = min(requestedEnd(of: other), ownEnd(of: other))
            if other.next < end { reserved.insert(ByteRange(other.next, end)) }
        }
        return reserved
    }

    /// The parts of `range` a whole-body fetch may write: not written, not being written, not in
    /// another process's bounded claim, not asked for by another fetch.
    private func free(_ range: ByteRange, for fetch: Fetch) -> [ByteRange] {
        var free = [range]
        for taken in [written, writing, foreign, reserved(byOthersThan: fetch)] {
            free = free.flatMap { taken.gaps(in: $0) }
        }
        return free
    }

    /// Whether `reader` still needs a byte that is not written in `[from, to)`.
    func needsUnwritten(_ reader: Reader, from: Int64, to: Int64 = Int64.max) -> Bool {
        let start = max(reader.position, from)
        let end = min(reader.end ?? Int64.max, info.length ?? Int64.max, to)
        guard start < end else { return false }
        guard let present = written.range(containing: start) else { return true }
        return present.upperBound < end
    }

    /// Whether another fetch is under way, or a reader reads outside what `fetch` serves: either
    /// may need bytes inside the next request of `fetch`.
    func hasCompany(_ fetch: Fetch) -> Bool {
        let limit = limit(of: fetch)
        return fetches.values.contains { $0.id != fetch.id && $0.generation == generation && !$0.isEnding }
            || readers.values.contains { $0.position < fetch.start || $0.position > limit }
    }

    /// Whether a reader will still need bytes `fetch` would write.
    func isWanted(_ fetch: Fetch) -> Bool {
        if fetch.isWhole { return isWantedWhole(fetch) }
        let limit = limit(of: fetch)
        guard fetch.next < limit else { return false }
        return readers.values.contains { reader in
            reader.position < limit && (reader.end ?? Int64.max) > fetch.next
        }
    }

    /// Whether a reader needs a byte a whole-body `fetch` has not passed yet and no other
    /// whole-body fetch ahead of it will pass first.
    private func isWantedWhole(_ fetch: Fetch) -> Bool {
        let ahead = fetches.values.filter {
            $0.id != fetch.id && $0.generation == fetch.generation && $0.isWhole && !$0.isEnding && $0.next > fetch.next
        }.map(\.next).min()
        return readers.values.contains { needsUnwritten($0, from: fetch.next, to: ahead ?? Int64.max) }
    }

    /// Charges the `count` body bytes fetch `id` just received to the reader it fetches for (or,
    /// if that one left, to another that waits on it), for the logs. Bytes that came while no
    /// reader was there go to the next one that comes for the same answer, if one does.
    private mutating func charge(_ count: Int64, to id: Int) {
        guard var fetch = fetches[id] else {
            unattributed += count
            return
        }
        if fetch.account.map({ readers[$0] == nil }) ?? true {
            fetch.account =
                readers.filter { $0.value.waitingOn == id }.keys.min()
                ?? readers.filter { reader in fetch.isWhole || reader.value.wants(fetch.next) }.keys.min()
        }
        if let account = fetch.account {
            readers[account]?.charged += count + fetch.heldCharge
            unattributed -= fetch.heldCharge
            fetch.heldCharge = 0
        } else {
            unattributed += count
            fetch.heldCharge += count
        }
        fetches[id] = fetch
    }

    /// The origin bytes charged to reader `id` since it was last asked.
    mutating func takeCharge(_ id: Int) -> Int64 {
        guard let charged = readers[id]?.charged, charged > 0 else { return 0 }
        readers[id]?.charged = 0
        return charged
    }

    /// The validator a fetch's request sends as `If-Range`: none before the version is known, nor
    /// to an origin that answered one with `304` (the answer's validators are checked anyway).
    var ifRangeToSend: String? {
        // Tags that rotate name no version: the bytes a request asks for again prove it instead.
        info.length == nil || ifRangeRefused || tagsRotate ? nil : info.ifRangeValidator
    }

    /// How many bytes before `first` a request for a gap at `first` asks for along with it: up to
    /// ``proofSpan`` of the cached bytes just before it, when the version's bytes are to be proven
    /// by bytes (no strong validator, or tags that rotate); none otherwise, or when none are cached
    /// there (an answer that cannot be proven then starts a version of its own).
    func proof(before first: Int64) -> Int64 {
        guard info.length != nil, joinsNeedBytes, first > 0,
            let cached = written.range(containing: first - 1)
        else { return 0 }
        return min(Self.proofSpan, first - cached.lowerBound)
    }

    /// Whether an answer described by `newInfo`, to a request for a gap at `first` that asked for
    /// no cached bytes before it, is to be asked for again with them: its fields prove nothing
    /// (``ContentInfo/match(_:)``) and there are cached bytes to prove it by. From then on the
    /// version's tags are no proof (``tagsRotate``). Once a version: a second such answer is
    /// a version of its own.
    mutating func asksForProof(after newInfo: ContentInfo, at first: Int64) -> Bool {
        guard info.length != nil, !tagsRotate, info.match(newInfo) == .unproven else { return false }
        tagsRotate = true
        return proof(before: first) > 0
    }

    /// Whether an answer joins the cached bytes only as bytes prove: no strong validator, tags
    /// that rotate, or a reader whose URL may give other content under the same tag.
    var joinsNeedBytes: Bool { !info.hasStrongValidator || tagsRotate || bytesMustProve }

    /// The most cached bytes a request asks for again as its proof: a few kilobytes a request,
    /// paid only where no validator can prove the join.
    static let proofSpan: Int64 = 8 << 10

    /// The origin answered a request with `If-Range` by `304`, which RFC 9110 §13.1.5 does not
    /// allow: later requests go without it.
    mutating func originRefusedIfRange() {
        ifRangeRefused = true
    }

    /// The fetch `id` if it belongs to the current version and is still writing.
    func current(_ id: Int) -> Fetch? {
        guard let fetch = fetches[id], fetch.generation == generation, !fetch.isEnding else { return nil }
        return fetch
    }

    // MARK: Events

    /// Fetch `id` got `answer` to its request; `proven` when the cached bytes its request asked for
    /// again (``FetchRequest/proof``) came back the same.
    ///
    /// An answer joins the cached bytes only as one version with them: by a strong validator
    /// (``ContentInfo/match(_:)``) or by the bytes it proved. One that cannot be told apart from
    /// another version starts a version of its own (its bytes are kept, the cached ones dropped).
    mutating func answered(
        _ id: Int,
        _ answer: OriginAnswer,
        sentIfRange: Bool,
        proven: Bool = false,
        now: Instant
    ) -> AnswerAction {
        defer { checkInvariants() }
        guard fetchesGoOn, var fetch = current(id), case .requesting(let first, _) = fetch.state else {
            return AnswerAction(readBody: false)
        }
        var action = AnswerAction(readBody: true)
        var body: Body
        switch answer {
        case .notModified:
            return AnswerAction(readBody: false)
        case .endOfResource(let total, let newInfo):
            var learned = info.length == nil ? newInfo : info
            learned.length = total
            if info.length == nil {
                learn(learned, now: now)
                action.store = learned
            } else if info.length != total {
                action.cancel = replaceVersion(with: learned, survivor: nil)
                action.replaceVersion = learned
            }
            action.readBody = false
            return action
        case .partial(let range, let newInfo):
            precondition(range.lowerBound == first, "OriginAnswer.judge lets through only answers at the asked start")
            action.ignoresRange = false
            if rangeSupport == .unknown { rangeSupport = .honoured }
            if info.length == nil {
                learn(newInfo, now: now)
                action.store = newInfo
            } else {
                let match = info.match(newInfo)
                switch match == .same && bytesMustProve ? .unproven : match {
                case .same:
                    break
                case .unproven where proven:
                    // The cached bytes under another tag: the version takes it.
                    if newInfo.etag != info.etag {
                        info.etag = newInfo.etag
                        info.stored = newInfo.stored
                        tagsRotate = true
                        action.store = info
                    }
                case .unproven where holdsNothingBesides(id):
                    // Nothing cached or on its way to join: the answer describes the version.
                    info = newInfo
                    action.store = newInfo
                case .unproven where tagsRotate || (info.etag == nil && newInfo.etag == nil):
                    // Nothing says the resource changed, and nothing proves the answer joins what
                    // is cached (no cached bytes just before it): its readers read on from the
                    // origin, uncached; the version stands.
                    var untagged = newInfo
                    if tagsRotate { untagged.etag = nil }
                    for (reader, state) in readers where state.waitingOn == id {
                        readers[reader]?.uncachedAgainst = untagged
                        readers[reader]?.waitingOn = nil
                    }
                    return AnswerAction(readBody: false)
                case .unproven, .different:
                    action.cancel = replaceVersion(with: newInfo, survivor: id)
                    action.replaceVersion = newInfo
                }
            }
            body = Body(position: range.lowerBound, expectedEnd: range.upperBound, isWhole: false)
        case .full(let newInfo):
            var learned = newInfo
            // A whole body proven the cached version arrives as `.partial` (``ResourceSession``
            // compared its bytes before the start); one that cannot be proven is a version of its own.
            let match = info.length == nil ? VersionMatch.same : info.match(newInfo)
            let changed = match == .different || (match == .unproven && !holdsNothingBesides(id))
            learned.byteRangeAccess = changed && sentIfRange
            if !learned.byteRangeAccess {
                // Not a new version sent for `If-Range`: the origin ignored the range.
                rangeSupport = .ignored
                action.ignoresRange = true
            } else if rangeSupport == .unknown {
                rangeSupport = .honoured
            }
            if info.length == nil {
                learn(learned, now: now)
                action.store = learned
            } else if changed {
                action.cancel = replaceVersion(with: learned, survivor: id)
                action.replaceVersion = learned
            } else if info.byteRangeAccess {
                info.byteRangeAccess = false
                action.store = info
            }
            body = Body(position: 0, expectedEnd: newInfo.length, isWhole: true)
        }
        if mayNotStore(info) || mayNotStore(answer.info ?? info) {
            // Not to be stored or reused: every read streams its bytes from the origin itself,
            // the reader this answer came for from this answer, with its head.
            action.readBody = false
            let waiting = readers.filter { $0.value.waitingOn == id }.keys.min()
            if let reader = waiting ?? fetch.account.flatMap({ readers[$0] == nil ? nil : $0 }) {
                readers[reader]?.waitingOn = nil
                readers[reader]?.relayed = true
                var head = answer.info ?? info
                if head.length == nil { head.length = info.length }
                action.relay = (reader, body.position, head)
                // It writes nothing; the relay, not the machine, ends it (its reader leaves the
                // session to read the relay).
                fetches[id]?.state = .ending
            }
            return action
        }
        fetch = fetches[id]!
        fetch.state = .receiving(body)
        // A whole body is kept from its first byte: its bytes before the one asked for are paid for.
        if body.isWhole { fetch.next = body.position }
        fetches[id] = fetch
        // Its readers left while it waited for the answer: the body has barely begun, drop it.
        if !isWanted(fetch) { action.readBody = false }
        return action
    }

    /// Whether the version holds no byte, nor one on its way, but those fetch `id` will write:
    /// nothing a new description of the resource could mix with.
    private func holdsNothingBesides(_ id: Int) -> Bool {
        guard written.isEmpty, writing.isEmpty, foreign.isEmpty, foreignStream == nil else { return false }
        return !fetches.values.contains { fetch in
            guard fetch.id != id, fetch.generation == generation, case .receiving = fetch.state else { return false }
            return true
        }
    }

    private mutating func learn(_ newInfo: ContentInfo, now: Instant) {
        info = newInfo
        confirmed(newInfo, now: now)
    }

    /// Fetch `id` received the next `count` bytes of its body at `now`.
    mutating func received(_ id: Int, count: Int, now: Instant) -> ChunkAction {
        defer { checkInvariants() }
        // Sent by the origin whether kept or not: the logs count them.
        charge(Int64(count), to: id)
        guard fetchesGoOn, var fetch = current(id), case .receiving(var body) = fetch.state else { return .stop }
        let chunk = ByteRange(body.position, body.position + Int64(count))
        if let expectedEnd = body.expectedEnd, chunk.upperBound > expectedEnd {
            return .fail(
                StreamCacheError(
                    .originProtocolViolation,
                    "the origin sent more bytes than its Content-Range or Content-Length said"
                )
            )
        }
        body.position = chunk.upperBound
        fetch.state = .receiving(body)
        if body.isWhole { return receivedWhole(chunk, of: fetch, now: now) }
        // A bounded answer is finished (its bytes are on their way, so a reader that left costs
        // nothing twice), but only for `orphanGrace`: a slow origin must not hold a connection
        // for nobody.
        guard keepsGoing(&fetch, now: now) else {
            fetches[id] = fetch
            return .stop
        }
        fetches[id] = fetch
        precondition(chunk.lowerBound <= fetch.next, "a body never runs ahead of its fetch's next byte")
        guard chunk.upperBound > fetch.next else { return .write([], endsFetch: false) }
        let limit = limit(of: fetch)
        let write = ByteRange(fetch.next, min(chunk.upperBound, limit))
        fetch.next = write.upperBound
        fetch.pendingWrites = ByteRangeSet([write])
        fetches[id] = fetch
        writing.insert(write)
        // Cut at the limit: the rest of the body is not this fetch's to write, ever.
        let endsFetch = write.upperBound < chunk.upperBound || fetch.next >= limit
        let piece = Piece(
            skip: Int(write.lowerBound - chunk.lowerBound),
            count: Int(write.count),
            offset: write.lowerBound
        )
        return .write(write.isEmpty ? [] : [piece], endsFetch: endsFetch)
    }

    /// Whether `fetch` goes on: while a reader wants what it brings (for a whole body, a reader
    /// of another process too), and for `orphanGrace` after the last one left.
    private func keepsGoing(_ fetch: inout Fetch, now: Instant) -> Bool {
        if isWanted(fetch) || (fetch.isWhole && othersWantStream(at: now)) {
            fetch.orphanedAt = nil
            return true
        }
        let orphanedAt = fetch.orphanedAt ?? now
        fetch.orphanedAt = orphanedAt
        return orphanedAt.duration(to: now) < settings.orphanGrace
    }

    /// Whether whole-body fetch `id` should read on: `nil` while a reader wants what it brings;
    /// `true` while it waits for one, for `orphanGrace` after the last one left; `false` once
    /// the grace is over, when it ends.
    ///
    /// A whole body nobody wants is not read further (it would run to the end for nobody), but
    /// is held: a player that hangs up and asks again at once (ffprobe, then ffmpeg; a seek)
    /// reads on from it. Cut, the next request would have the origin send every byte before
    /// the cut again. A body that has brought every byte it announced holds nothing back: it
    /// reads on to its end, which comes at once, and its bytes are recorded.
    mutating func waitsForReader(_ id: Int, now: Instant) -> Bool? {
        guard var fetch = current(id), fetch.isWhole else { return nil }
        if case .receiving(let body) = fetch.state, let end = body.expectedEnd, body.position >= end {
            return nil
        }
        let goesOn = keepsGoing(&fetch, now: now)
        fetches[id] = fetch
        // `keepsGoing` clears `orphanedAt` exactly when a reader wants what the fetch brings.
        return fetch.orphanedAt == nil ? nil : goesOn
    }

    /// When whole-body fetch `id`, held for a reader to come (``waitsForReader(_:now:)``), stops
    /// waiting: `orphanGrace` after the last reader left; `nil` while one wants what it brings.
    func holdEnds(_ id: Int) -> Instant? {
        current(id)?.orphanedAt.map { $0 + settings.orphanGrace }
    }

    /// A chunk `chunk` of a whole body arrived for `fetch`: every free byte of it is kept, while
    /// a reader needs a byte the body has yet to bring, and in the grace after the last one
    /// left (``waitsForReader(_:now:)``).
    private mutating func receivedWhole(_ chunk: ByteRange, of fetch: Fetch, now: Instant) -> ChunkAction {
        var fetch = fetch
        fetch.next = chunk.lowerBound
        // Judged at the chunk's first byte: a large chunk may hold what a reader waits for.
        let goesOn = keepsGoing(&fetch, now: now)
        fetches[fetch.id] = fetch
        guard goesOn else { return .stop }
        // Every byte that arrived is kept, past the end the fetch was started for too.
        let end = info.length ?? Int64.max
        let kept = chunk.lowerBound < end ? ByteRange(chunk.lowerBound, min(chunk.upperBound, end)) : nil
        let pieces = kept.map { free($0, for: fetch) } ?? []
        fetch.pendingWrites = ByteRangeSet(pieces)
        fetch.next = chunk.upperBound
        // Past the chunk, nobody needs what the body brings next, and the grace is over.
        let ends = !keepsGoing(&fetch, now: now)
        fetches[fetch.id] = fetch
        for piece in pieces { writing.insert(piece) }
        return .write(
            pieces.map {
                Piece(skip: Int($0.lowerBound - chunk.lowerBound), count: Int($0.count), offset: $0.lowerBound)
            },
            endsFetch: ends
        )
    }

    /// Fetch `id` wrote what ``received(_:count:)`` told it to.
    ///
    /// - Returns: a batch to sync and record (``synced(_:generation:)``), if one is due.
    mutating func wrote(_ id: Int, now: Instant) -> ByteRangeSet? {
        defer { checkInvariants() }
        guard var fetch = fetches[id], !fetch.pendingWrites.isEmpty else { return nil }
        let pieces = fetch.pendingWrites
        fetch.pendingWrites = ByteRangeSet()
        guard fetch.generation == generation else {
            fetches[id] = fetch
            return nil
        }
        for range in pieces.ranges {
            writing.remove(range)
            written.insert(range)
            fetch.unsynced.insert(range)
        }
        fetch.unsyncedBytes += pieces.count
        var batch: ByteRangeSet?
        if fetch.unsyncedBytes >= settings.syncBytes || fetch.lastSync.duration(to: now) >= settings.syncInterval {
            batch = fetch.unsynced
            fetch.unsynced = ByteRangeSet()
            fetch.unsyncedBytes = 0
            fetch.lastSync = now
        }
        fetches[id] = fetch
        return batch
    }

    /// Fetch `id`'s body ended where the origin closed it.
    mutating func bodyEnded(_ id: Int) -> BodyEndAction {
        defer { checkInvariants() }
        guard var fetch = current(id), case .receiving(let body) = fetch.state else { return .finish(store: nil) }
        if let expectedEnd = body.expectedEnd, body.position < expectedEnd {
            return .fail(
                StreamCacheError(
                    .originUnreachable,
                    "the origin ended the body \(expectedEnd - body.position) bytes short"
                )
            )
        }
        if body.isWhole {
            guard info.length == nil else { return .finish(store: nil) }
            info.length = body.position
            return .finish(store: info)
        }
        guard isWanted(fetch) else { return .finish(store: nil) }
        // Requests grow while the fetch has the resource to itself; with company they stay at the
        // first size, so a reader that comes inside one can wait for it (see `joinableFetch`).
        fetch.span = hasCompany(fetch) ? settings.firstFetchSpan : min(fetch.span * 2, settings.maxFetchSpan)
        let request = request(for: fetch)
        fetch.state = .requesting(first: request.first, last: request.last)
        fetches[id] = fetch
        return .request(request)
    }

    /// Fetch `id` writes nothing more, because of `error` if any (its waiting readers get it).
    ///
    /// - Returns: its last unsynced bytes, to sync and record before ``removeFetch(_:)``.
    mutating func endFetch(_ id: Int, error: StreamCacheError?) -> ByteRangeSet? {
        defer { checkInvariants() }
        guard var fetch = fetches[id] else { return nil }
        if fetch.generation == generation {
            // Told to write, never said it did: those bytes are not in the file.
            for pending in fetch.pendingWrites.ranges { writing.remove(pending) }
        }
        fetch.pendingWrites = ByteRangeSet()
        fetch.state = .ending
        let batch = fetch.unsynced
        fetch.unsynced = ByteRangeSet()
        fetch.unsyncedBytes = 0
        fetches[id] = fetch
        for (readerID, reader) in readers where reader.waitingOn == id {
            readers[readerID]?.waitingOn = nil
            if let error { readers[readerID]?.failure = error }
        }
        return fetch.generation == generation && !batch.isEmpty ? batch : nil
    }

    /// Fetch `id` is gone, its bytes durable and recorded.
    mutating func removeFetch(_ id: Int) {
        fetches[id] = nil
    }

    /// Bytes `batch` of generation `generation` were made durable.
    ///
    /// - Returns: the ranges to record in the index now, if they still belong to the current version.
    mutating func synced(_ batch: ByteRangeSet, generation: Int) -> ByteRangeSet? {
        defer { checkInvariants() }
        guard generation == self.generation else { return nil }
        durable = durable.union(batch)
        return batch
    }

    /// Bytes `batch` of generation `generation` were recorded in the index.
    mutating func recorded(_ batch: ByteRangeSet, generation: Int) {
        defer { checkInvariants() }
        guard generation == self.generation else { return }
        recorded = recorded.union(batch)
    }
}
