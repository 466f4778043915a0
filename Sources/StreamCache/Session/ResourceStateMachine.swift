import Foundation

/// Every decision about one resource's reads, with no I/O, no tasks and no clock of its own.
///
/// A ``ResourceSession`` feeds it events (a reader wants bytes, a fetch got an answer or a chunk,
/// bytes became durable, the origin confirmed or replaced the version, another process recorded
/// ranges), each with the time it happened, and carries out the actions it returns (deliver a
/// span from the cache file, wait, start a fetch, write these bytes at this offset, sync, record,
/// replace the version, fail a reader).
///
/// What it knows of the current version's bytes, each a subset of the one before:
/// * `written`: in the cache file, readable;
/// * `durable`: made durable with `fdatasync`;
/// * `recorded`: recorded in the index (the index may know less than the file, never more).
///
/// A fetch of a range writes only at its `next` byte and only below its limit: the end it was
/// asked for, the resource's end, the next written byte, the `next` byte of any fetch ahead of it
/// and the first byte another process claimed. A fetch whose origin ignored `Range` and sent the
/// whole body keeps every byte of it that is free (not written, not being written, not asked for
/// by another fetch or claimed by another process), the bytes before the one it was started for
/// too. So no two fetches write the same byte, no byte is written twice, and what an origin sends
/// is kept.
///
/// Its stored state is `private(set)`: the session reads it, and only the machine's events
/// change it, which is why every event lives in this one file.
struct ResourceStateMachine: Sendable {
    typealias Instant = ContinuousClock.Instant

    let settings: Settings
    /// What the origin has said about the current version.
    private(set) var info: ContentInfo
    /// Counts versions of the resource seen by this session; fetches and syncs carry the one
    /// they belong to.
    private(set) var generation = 0
    private(set) var written: ByteRangeSet
    private(set) var durable: ByteRangeSet
    private(set) var recorded: ByteRangeSet
    /// Bytes fetches were told to write and have not yet reported written.
    private(set) var writing = ByteRangeSet()
    /// Bytes fetches of other processes sharing the cache directory have claimed (asked their
    /// origin for); they are not this process's to fetch or write.
    private(set) var foreign = ByteRangeSet()
    /// Where another process's claim to the end starts: its origin sends whole bodies, and it
    /// keeps every byte from there on.
    private(set) var foreignStream: Int64?
    /// Until when a reader of another process is known to wait for this process's whole-body
    /// stream (``othersWantStream(at:)``).
    private(set) var othersWantStreamUntil: Instant?
    /// Origin body bytes received while no reader was there to be charged for them.
    private(set) var unattributed: Int64 = 0
    private(set) var readers: [Int: Reader] = [:]
    private(set) var fetches: [Int: Fetch] = [:]
    private(set) var phase = Phase.ready
    /// Until when the cached version may be reused without asking the origin (RFC 9111 §4.2:
    /// its freshness, from the origin's last word on it); `nil`: ask first.
    private(set) var freshUntil: Instant?
    /// Whether the origin could not be reached to check a stale version, which is served as it
    /// is (RFC 9111 §4.2.4) until the origin answers again.
    private(set) var isServingStale = false
    /// Whether a check of the version runs while readers go on (``ReadAction/checkInBackground(_:)``).
    private(set) var checksInBackground = false
    /// Whether the origin answered `If-Range` with `304`; requests go without it then.
    private(set) var ifRangeRefused = false
    /// Whether the origin sent the cached bytes under another entity tag: its tags say nothing of
    /// its bytes, so ranges join the cached ones only as bytes prove (``proof(before:)``).
    private(set) var tagsRotate = false
    /// Whether the next check of the version must be proven by bytes, whatever the validators
    /// say: a reader came with other values of the query parameters the key leaves out, which
    /// may give other content under the same tag (``ResourceSession/opened(with:headers:)``).
    private(set) var bytesMustProve = false
    /// What the origin does with a request for a range, as this resource's answers or, by its
    /// session, another resource's of the same origin said; `unknown` until the first answer
    /// of an origin its session has not met. `honoured` asks nothing of a reader.
    private(set) var rangeSupport = OriginRangeSupport.Support.honoured
    /// Whether the origin is known to answer a request for a range with the whole body.
    var ignoresRange: Bool { rangeSupport == .ignored }

    /// A reader came with other values of the query parameters the key leaves out than the
    /// cached bytes were fetched with: the next check of the version is proven by bytes.
    mutating func otherTokensCame() { bytesMustProve = true }

    /// What the origin's other resources said it does with a request for a range, for a
    /// resource nothing is known of yet.
    mutating func originRangesAre(_ support: OriginRangeSupport.Support) { rangeSupport = support }
    /// When the index was last read for ranges another process recorded.
    private(set) var refreshedAt: Instant
    private(set) var lastID = 0

    /// A machine for a resource whose index row says `info` and `recorded`.
    ///
    /// `freshUntil`: until when the stored response is fresh, from its stored fields and the wall
    /// clock (``StoredFields/remainingFreshness(at:heuristicLimit:cap:)``).
    init(info: ContentInfo, recorded: ByteRangeSet, freshUntil: Instant?, now: Instant, settings: Settings) {
        self.settings = settings
        self.info = info
        self.written = recorded
        self.durable = recorded
        self.recorded = recorded
        self.freshUntil = info.length == nil ? nil : freshUntil
        self.refreshedAt = now
    }

    /// How long a response received just now stays fresh (RFC 9111 §4.2), at most the
    /// configured cap; none for `no-cache`.
    func freshness(of info: ContentInfo) -> Duration {
        // At receipt; the cap counts from when the origin spoke, as the lifetime does.
        Self.remainingFreshness(
            of: info,
            at: info.stored.receivedAt,
            heuristicLimit: settings.heuristicLimit,
            cap: settings.revalidationInterval,
            shared: settings.isShared
        )
    }

    /// How much longer a response described by `info` is fresh at `moment` (seconds since
    /// 1970), its lifetime at most `cap`; zero for `no-cache` or a stale one.
    static func remainingFreshness(
        of info: ContentInfo,
        at moment: Double,
        heuristicLimit: Duration,
        cap: Duration,
        shared: Bool
    ) -> Duration {
        guard !info.stored.cacheControl(shared: shared).noCache else { return .zero }
        let seconds = info.stored.remainingFreshness(
            at: moment,
            heuristicLimit: Self.seconds(heuristicLimit),
            cap: Self.seconds(cap),
            shared: shared
        )
        guard seconds > 0 else { return .zero }
        return .milliseconds(Int64(min(seconds, 1e12) * 1000))
    }

    /// Whether a response described by `info` may not be stored or reused: `no-store`, unless the
    /// user overrode it, or `Vary: *` (RFC 9111 §3, §4.1).
    func mayNotStore(_ info: ContentInfo) -> Bool {
        (control(of: info).noStore && !settings.storesNoStore) || info.stored.vary.contains("*")
    }

    /// The directives of `info`'s response as this cache acts on them: a shared cache's, or a
    /// private one's (``Settings/isShared``).
    func control(of info: ContentInfo) -> CacheControl {
        info.stored.cacheControl(shared: settings.isShared)
    }

    /// The stored version is no longer known to be fresh (``StoredFields/invalidated()``): the
    /// next read asks the origin first.
    mutating func invalidate() {
        info.stored = info.stored.invalidated()
        freshUntil = nil
    }

    /// The origin confirmed `info` (or first described it) at `now`.
    mutating func confirmed(_ info: ContentInfo, now: Instant) {
        freshUntil = now.advanced(by: freshness(of: info))
        isServingStale = false
    }

    /// Whether fetches go on: also while a reader checks the version with the origin (a new
    /// version, from either, makes the fetches of the old one stale).
    var fetchesGoOn: Bool {
        switch phase {
        case .ready, .validating: true
        case .replacing, .broken: false
        }
    }

    /// Whether nothing is going on: no reader, no fetch, no validation or version change.
    var isIdle: Bool { readers.isEmpty && fetches.isEmpty && phase == .ready }

    mutating func makeID() -> Int {
        lastID += 1
        return lastID
    }
}

extension ResourceStateMachine {
    /// The tuning the machine decides with (see ``CacheConfiguration``).
    struct Settings: Sendable {
        var joinDistance: Int64
        var joinWait: Duration
        var firstFetchSpan: Int64
        var maxFetchSpan: Int64
        /// ``CacheConfiguration/fetchAheadLimit``.
        var fetchAheadLimit: Int64?
        var syncBytes: Int64
        var syncInterval: Duration
        var revalidationInterval: Duration
        /// The longest heuristic freshness given a response with only `Last-Modified`.
        var heuristicLimit: Duration
        /// Whether a stale copy is served offline despite `must-revalidate`/`no-cache`.
        var servesStaleAlways: Bool
        /// Whether responses marked `no-store` are stored all the same (the user said so).
        var storesNoStore: Bool
        /// How long a fetch no reader wants may go on finishing the request it is in.
        var orphanGrace: Duration
        /// Whether the cache is shared by several users (``CacheConfiguration/isShared``).
        var isShared: Bool
        /// How often a reader facing a gap looks in the index for bytes another process fetched.
        var refreshInterval: Duration
        /// How long a reader of a resource nothing is known of waits for another process's first
        /// answer head before it asks the origin itself.
        var headWait: Duration = .seconds(2)
        /// How long another process's want, read from the index, keeps a whole body read on
        /// before the index must say it again.
        var wantHold: Duration = .seconds(1)
        /// Whether a broken invariant stops the process where invariants are checked (model tests
        /// check them themselves, to report the seed).
        var assertsInvariants = true

        /// The settings of `configuration` for the resource at `url`.
        init(_ configuration: CacheConfiguration, url: URL? = nil) {
            joinDistance = configuration.joinDistance
            joinWait = configuration.joinWait
            firstFetchSpan = configuration.firstFetchSpan
            maxFetchSpan = configuration.maxFetchSpan
            fetchAheadLimit = configuration.fetchAheadLimit
            syncBytes = configuration.syncBytes
            syncInterval = configuration.syncInterval
            revalidationInterval = configuration.revalidationInterval
            heuristicLimit = configuration.heuristicFreshnessLimit
            servesStaleAlways = configuration.servesStaleAlways
            storesNoStore = url.map(configuration.storesNoStore) ?? false
            orphanGrace = configuration.orphanGrace
            isShared = configuration.isShared
            refreshInterval = .seconds(1)
        }
    }

    /// What the session as a whole is doing.
    enum Phase: Equatable, Sendable {
        /// Reads and fetches go on.
        case ready
        /// One reader is asking the origin whether the cached version is current; others wait.
        /// `forced` when the reader asked whatever the version's age (a document that may change).
        case validating(forced: Bool)
        /// The session is moving to a new version (new index row and file); everyone waits.
        case replacing
        /// Moving to a new version failed: every read fails with this error.
        case broken(StreamCacheError)
    }

    /// A reader of `[start, end)` (`end == nil`: to the end of the resource).
    struct Reader: Sendable {
        let start: Int64
        /// The next byte the reader needs.
        var position: Int64
        let end: Int64?
        /// The bytes that were cached when the reader came; the others it gets come from the origin.
        var cachedAtStart: ByteRangeSet
        /// The fetch whose failure the reader is handed, if it waits on one.
        var waitingOn: Int?
        /// An error to hand the reader at its next read.
        var failure: StreamCacheError?
        /// Whether the reader has had the version checked (or found it fresh).
        var checkedVersion = false
        /// Whether the reader wants the version checked with the origin whatever its age (a
        /// playlist that may change).
        var revalidates = false
        /// Whether the reader reads a part ahead of another's fetch to bring it on a connection of
        /// its own (a download's last files): it does not wait for a request that asks for its
        /// bytes but is far from them.
        var readsAhead = false
        /// Whether a fetch handed the reader its answer, which the cache may not keep: it reads
        /// that answer, not the cache.
        var relayed = false
        /// Whether the reader was handed bytes (it may not have reported reading them yet).
        var hasDelivered = false
        /// Origin body bytes received for the reader and not yet reported with a span.
        var charged: Int64 = 0
        /// Whether the reader was told once that it waits far behind a whole-body stream.
        var toldOfStream = false
        /// Since when the reader waits for another process's first answer head, if it does.
        var awaitsHeadSince: ContinuousClock.Instant?
        /// Set when the origin's entity tag changed under a reader that was handed bytes, and
        /// nothing else did: the reader goes on uncached, its answer checked against this
        /// version, whose tag is not to be trusted.
        var uncachedAgainst: ContentInfo?

        /// Whether the reader will still need byte `offset`.
        func wants(_ offset: Int64) -> Bool { position <= offset && (end ?? Int64.max) > offset }
    }

    /// One origin transfer filling a gap: one request after another, each for twice the bytes of
    /// the one before, while a reader wants more.
    struct Fetch: Sendable {
        let id: Int
        /// The version the fetch writes; a fetch of an older one is stale and writes nothing more.
        var generation: Int
        let start: Int64
        /// The next byte the fetch will write.
        var next: Int64
        /// Where the fetch stops at the latest (exclusive), `nil`: the end of the resource.
        let end: Int64?
        let startedAt: Instant
        /// How many bytes the next request asks for.
        var span: Int64
        var state: State
        /// What the fetch was told to write and has not reported written.
        var pendingWrites = ByteRangeSet()
        /// The reader charged with the body bytes the fetch receives.
        var account: Int?
        /// Written by this fetch, not yet handed to a sync.
        var unsynced = ByteRangeSet()
        var unsyncedBytes: Int64 = 0
        var lastSync: Instant
        /// Since when no reader wants what the fetch writes (`nil`: one does).
        var orphanedAt: Instant?
        /// Body bytes received while no reader was there to charge, to charge to the next one
        /// (meanwhile in `unattributed`): a whole body is held for the reader that comes back.
        var heldCharge: Int64 = 0

        enum State: Sendable {
            /// A request for `first...last` is on its way.
            case requesting(first: Int64, last: Int64?)
            /// The answer's body is arriving.
            case receiving(Body)
            /// The fetch writes nothing more; its last bytes are being made durable.
            case ending
        }

        var isEnding: Bool {
            if case .ending = state { return true }
            return false
        }

        /// Whether the fetch receives a whole body (the origin ignored `Range`) and keeps what it can of it.
        var isWhole: Bool {
            if case .receiving(let body) = state { return body.isWhole }
            return false
        }
    }

    /// The body of an accepted answer.
    struct Body: Sendable {
        /// The resource offset of the next body byte.
        var position: Int64
        /// Where the body must end, if the answer said.
        let expectedEnd: Int64?
        /// Whether the body runs to the end of the resource (a `200`), so its end tells the length.
        let isWhole: Bool
    }

    /// What a fetch asks the origin for.
    struct FetchRequest: Equatable, Sendable {
        let fetch: Int
        let first: Int64
        /// The last byte (inclusive), `nil`: to the end.
        let last: Int64?
        /// The validator for `If-Range`, when the version is known.
        let ifRange: String?
        /// How many cached bytes before `first` the request asks for too, to compare with the
        /// file before the rest joins them: the proof that its answer is the cached version
        /// where no strong validator is (``ResourceStateMachine/proof(before:)``).
        var proof: Int64 = 0

        /// The first byte the origin is asked for.
        var askedFirst: Int64 { first - proof }
    }
}

// MARK: - Readers

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

    /// Forgets reader `id`. Fetches only it wanted finish the request they are in (for
    /// `orphanGrace`) and stop. Of those still waiting for their answer, one that asked for at
    /// most ``answerInFlight`` bytes goes on too where there is a grace (an origin close by has
    /// sent them already; dropped, they would be asked for again by the next reader of them);
    /// the others are given up.
    ///
    /// - Returns: the fetches to cancel.
    @discardableResult
    mutating func removeReader(_ id: Int) -> [Int] {
        unattributed += readers[id]?.charged ?? 0
        readers[id] = nil
        return fetches.values.filter { fetch in
            guard case .requesting(let first, let last) = fetch.state, fetch.generation == generation else {
                return false
            }
            if let last, last - first + 1 <= Self.answerInFlight, settings.orphanGrace > .zero { return false }
            return !isWanted(fetch)
        }.map(\.id)
    }

    /// The most bytes an answer nobody waits for any more is read for: about what the network
    /// holds in flight, which the origin sends whether the answer is read or not.
    static let answerInFlight: Int64 = 256 << 10

    /// Whether `body` is a bounded answer of at most ``answerInFlight`` bytes.
    private static func isInFlight(_ body: Body) -> Bool {
        guard !body.isWhole, let end = body.expectedEnd else { return false }
        return end - body.position <= answerInFlight
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

    /// Whether every byte of the current version is cached and may be reused as it is, without
    /// asking the origin (RFC 9111 §4.2).
    func isCompleteAndFresh(now: Instant) -> Bool {
        info.isComplete(with: written) && !needsValidation(now: now) && !isServingStale
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

// MARK: - Fetches

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

    /// Whether a reader that wants `fetch`'s next byte is at most ``Settings/fetchAheadLimit``
    /// behind it (always, without a limit).
    private func isWithinReach(_ fetch: Fetch) -> Bool {
        guard let limit = settings.fetchAheadLimit else { return true }
        return readers.values.contains { $0.wants(fetch.next) && fetch.next - $0.position <= limit }
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
        // Its readers left while it waited for the answer. An answer of at most ``answerInFlight``
        // bytes is on its way whether it is read or not: it is read for `orphanGrace`, as when
        // they leave in the middle of it, so the next reader of those bytes does not have them
        // sent again (``removeReader(_:)``). A larger one, or a whole body, has barely begun:
        // it is dropped.
        if !isWanted(fetch), !Self.isInFlight(body) { action.readBody = false }
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
        guard isWanted(fetch), isWithinReach(fetch) else { return .finish(store: nil) }
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

// MARK: - Versions

extension ResourceStateMachine {
    /// What the origin said when asked whether the cached version is current.
    enum Validation: Sendable {
        /// The origin's word that the cached bytes are good; the answer's fields, if any, update
        /// the stored ones (RFC 9111 §4.3.4). `proven`: by a strong validator or by the bytes;
        /// otherwise by a weak validator alone, which does not let ranges join.
        case current(StoredFields?, proven: Bool)
        /// A new version, described so.
        case changed(ContentInfo)
        /// The cached bytes under another entity tag (the bytes the answer carried are the cached
        /// ones): the version stands and takes the tag and the answer's fields.
        case retagged(ContentInfo)
        /// No answer (offline): the cached bytes are served as they are (RFC 9111 §4.2.4), unless
        /// the response says it must not be served stale.
        case unreachable(StreamCacheError)
        /// The origin answered with an error status (`4xx`): the readers that waited get it, as it
        /// came (RFC 9111 §4.3.3); the cached copy stays for later.
        case refused(StreamCacheError)
        /// The reader asking went away before the answer: another reader asks again.
        case abandoned

        /// Whether the origin said the cached bytes are current (under their tag or another).
        var confirmsTheCachedBytes: Bool {
            switch self {
            case .current, .retagged: true
            default: false
            }
        }
    }

    /// The origin answered the validation a reader was told to make.
    ///
    /// - Returns: the new version to move to (then ``versionReplaced(now:)``) and the fetches to
    ///   cancel, if the resource changed.
    mutating func validated(_ result: Validation, now: Instant) -> (ContentInfo, cancel: [Int])? {
        defer { checkInvariants() }
        guard case .validating(let forced) = phase else { return nil }
        phase = .ready
        return settle(result, forced: forced, now: now)
    }

    /// The answer of a check made while readers went on (``ReadAction/checkInBackground(_:)``);
    /// taken as ``validated(_:now:)`` takes one, unless the version moved on meanwhile.
    mutating func checkedInBackground(_ result: Validation, now: Instant) -> (ContentInfo, cancel: [Int])? {
        defer { checkInvariants() }
        checksInBackground = false
        guard phase == .ready else { return nil }
        return settle(result, forced: false, now: now)
    }

    private mutating func settle(_ result: Validation, forced: Bool, now: Instant) -> (ContentInfo, cancel: [Int])? {
        switch result {
        case .abandoned:
            return nil
        case .refused(let error):
            for (id, reader) in readers where !reader.hasDelivered { readers[id]?.failure = error }
            return nil
        case .unreachable(let error):
            let control = control(of: info)
            if (control.mustRevalidate || control.noCache) && !settings.servesStaleAlways {
                // The origin said never to serve it unchecked: the readers that waited fail.
                for (id, reader) in readers where !reader.hasDelivered {
                    readers[id]?.failure = StreamCacheError(
                        .staleNotAllowed,
                        "the cached copy must be revalidated and \(error.message)"
                    )
                }
                return nil
            }
            // Served as it is; asked again a little later, not by every reader.
            freshUntil = now.advanced(by: .seconds(10))
            isServingStale = true
            return nil
        case .changed(let newInfo):
            confirmed(newInfo, now: now)
            return (newInfo, replaceVersion(with: newInfo, survivor: nil))
        case .retagged(let newInfo):
            info.etag = newInfo.etag
            info.stored = newInfo.stored
            tagsRotate = true
            bytesMustProve = false
            confirmed(info, now: now)
            return nil
        case .current(_, proven: false) where forced:
            // A weak validator's word on a document asked to be checked: nothing says its cached
            // bytes are current to the byte; start again. (Otherwise the word lets the cached
            // bytes be reused, RFC 9111 §4.3.3, and the missing ones join them only as the bytes
            // they ask for again prove, ``proof(before:)``.)
            confirmed(info, now: now)
            return (info, replaceVersion(with: info, survivor: nil))
        case .current(let fields, _):
            bytesMustProve = false
            if let fields { info.stored = info.stored.updated(with: fields.fields, receivedAt: fields.receivedAt) }
            confirmed(info, now: now)
            return nil
        }
    }

    /// The cache file ends at `size`, before bytes the machine holds written: they are gone,
    /// and fetched again when read.
    mutating func forget(from size: Int64) {
        defer { checkInvariants() }
        written = written.clamped(below: size)
        durable = durable.clamped(below: size)
        recorded = recorded.clamped(below: size)
        for (id, reader) in readers { readers[id]?.cachedAtStart = reader.cachedAtStart.clamped(below: size) }
    }

    /// Whether the whole body fetch `id` got for its `If-Range` may be the cached version under
    /// another entity tag, to be told by its bytes before `first`: the same length and
    /// `Last-Modified` (or none on either side), and cached bytes there to compare.
    func mayBeRetagged(_ id: Int, as newInfo: ContentInfo, before first: Int64) -> Bool {
        guard current(id) != nil, info.match(newInfo) == .unproven,
            let cached = written.firstOffset(atOrAfter: 0)
        else { return false }
        return cached < first
    }

    /// The bytes fetch `id` got before its start are the cached ones: the version keeps its bytes
    /// and takes the new tag and fields (an origin that tags every response anew).
    ///
    /// - Returns: the content information to store, or `nil` if the fetch is no longer current.
    mutating func retagged(_ id: Int, as newInfo: ContentInfo, now: Instant) -> ContentInfo? {
        defer { checkInvariants() }
        guard fetchesGoOn, current(id) != nil else { return nil }
        if newInfo.etag != info.etag { tagsRotate = true }
        info.etag = newInfo.etag
        info.stored = newInfo.stored
        confirmed(info, now: now)
        return info
    }

    /// The bytes fetch `id` got before its start differ from the cached ones: a new version,
    /// fetched anew; readers that got bytes of the old one fail.
    ///
    /// - Returns: the fetches to cancel (this one among them), or `nil` if it is no longer current.
    mutating func changedUnderFetch(_ id: Int, to newInfo: ContentInfo) -> [Int]? {
        defer { checkInvariants() }
        guard fetchesGoOn, current(id) != nil else { return nil }
        return replaceVersion(with: newInfo, survivor: nil, bytesDiffer: true)
    }

    /// Moves to a new version: nothing of the old one is readable any more; readers that already
    /// got old bytes fail with `resourceChanged` (unless only the tag changed, `bytesDiffer`
    /// unknown), the others go on with new bytes; fetches of the old version, except `survivor`
    /// (the one that saw the new version), are stale.
    ///
    /// - Returns: the stale fetches, to cancel.
    mutating func replaceVersion(with newInfo: ContentInfo, survivor: Int?, bytesDiffer: Bool = false) -> [Int] {
        let oldInfo = info
        generation += 1
        info = newInfo
        // The new version's bytes come from the newest URL: nothing before them to prove.
        bytesMustProve = false
        phase = .replacing
        written = ByteRangeSet()
        durable = ByteRangeSet()
        recorded = ByteRangeSet()
        writing = ByteRangeSet()
        // Claims are of the old version's row; the index drops them with it.
        foreign = ByteRangeSet()
        foreignStream = nil
        var stale: [Int] = []
        for (id, fetch) in fetches where !fetch.isEnding {
            if id == survivor {
                // What it wrote before belongs to the old version: never synced or recorded.
                fetches[id]?.generation = generation
                fetches[id]?.unsynced = ByteRangeSet()
                fetches[id]?.unsyncedBytes = 0
                fetches[id]?.pendingWrites = ByteRangeSet()
            } else {
                stale.append(id)
            }
        }
        for (id, reader) in readers {
            readers[id]?.cachedAtStart = ByteRangeSet()
            if let waitingOn = reader.waitingOn, waitingOn != survivor { readers[id]?.waitingOn = nil }
            if reader.hasDelivered, !bytesDiffer, oldInfo.differsOnlyInETag(from: newInfo) {
                // An origin that tags every response anew: the reader reads on uncached rather
                // than be cut; the length and Last-Modified stand for the version.
                var untagged = newInfo
                untagged.etag = nil
                readers[id]?.uncachedAgainst = untagged
            } else if reader.hasDelivered {
                readers[id]?.failure = StreamCacheError(
                    .resourceChanged,
                    "the resource changed at the origin during the read"
                )
            }
        }
        return stale
    }

    /// The new version's index row and file are in place.
    mutating func versionReplaced(now: Instant) {
        defer { checkInvariants() }
        guard phase == .replacing else { return }
        phase = .ready
        confirmed(info, now: now)
    }

    /// The new version's index row or file could not be made: nothing can be read or written.
    mutating func replacementFailed(_ error: StreamCacheError) {
        phase = .broken(error)
    }
}

// MARK: - Sharing with other processes

extension ResourceStateMachine {
    /// What the index answered when a fetch claimed the bytes of its next request.
    enum Claim: Sendable, Equatable {
        /// Granted up to `last` (`nil`: to the end), perhaps less than asked for.
        case granted(last: Int64?)
        /// The first byte is another process's to fetch, or recorded already.
        case refused
    }

    /// What the index holds of the current version and what other processes claim of it.
    struct Shared: Sendable, Equatable {
        var recorded: ByteRangeSet
        /// Bytes of other processes' bounded claims.
        var foreign: ByteRangeSet
        /// Where another process's claim to the end starts (its origin sends whole bodies).
        var foreignStream: Int64?
        /// The origin's answer head as another process stored it, for a machine that knows no
        /// length yet.
        var stored: StoredHead?
        /// Whether another process's reader waits for a whole-body stream (``CacheIndex``'s wants).
        var othersWantStream: Bool

        init(
            recorded: ByteRangeSet,
            foreign: ByteRangeSet = ByteRangeSet(),
            foreignStream: Int64? = nil,
            stored: StoredHead? = nil,
            othersWantStream: Bool = false
        ) {
            self.recorded = recorded
            self.foreign = foreign
            self.foreignStream = foreignStream
            self.stored = stored
            self.othersWantStream = othersWantStream
        }

        /// What `state` says; `stored` is left for the session to fill in, with the freshness
        /// the wall clock gives it.
        init(_ state: CacheIndex.SharedState) {
            self.init(
                recorded: state.recorded,
                foreign: state.foreign,
                foreignStream: state.foreignStream,
                othersWantStream: state.othersWantStream
            )
        }
    }

    /// What the index holds of the origin's answer head, and until when it is fresh.
    struct StoredHead: Sendable, Equatable {
        var info: ContentInfo
        var freshUntil: Instant?
    }

    /// Whether a reader of another process waits for this process's whole-body stream, as the
    /// index said at most ``Settings/wantHold`` ago.
    func othersWantStream(at now: Instant) -> Bool {
        othersWantStreamUntil.map { now < $0 } ?? false
    }

    /// Whether a reader waiting at `position` waits for another process's whole-body stream:
    /// its session says so in the index, so that the stream reads on for it.
    func awaitsForeignStream(at position: Int64) -> Bool {
        foreignStream.map { $0 <= position } ?? false
    }

    /// Whether every byte of the resource is recorded (its length known): nobody writes its file.
    var isWhollyRecorded: Bool {
        info.length.map { $0 == 0 || recorded.contains(ByteRange(0, $0)) } ?? false
    }

    /// Whether another process claims bytes of the resource, as the index said when last read:
    /// its fetch may write the data file at any moment.
    var isWrittenElsewhere: Bool {
        !foreign.isEmpty || foreignStream != nil
    }

    /// Whether byte `position` is another process's to fetch.
    func isForeign(_ position: Int64) -> Bool {
        foreign.contains(position) || awaitsForeignStream(at: position)
    }

    /// The index was read for generation `generation`: ranges other processes recorded become
    /// readable; their claims are theirs to fetch.
    mutating func refreshed(_ shared: Shared, generation: Int, now: Instant) {
        defer { checkInvariants() }
        guard generation == self.generation, fetchesGoOn else { return }
        refreshedAt = now
        var known = shared.recorded
        // Bytes a fetch of ours is writing right now stay its own until it says they are written.
        for range in writing.ranges { known.remove(range) }
        written = written.union(known)
        durable = durable.union(known)
        recorded = recorded.union(known)
        foreign = shared.foreign
        foreignStream = shared.foreignStream
        // Until the index is read again, and no longer than `wantHold`.
        othersWantStreamUntil = shared.othersWantStream ? now + settings.wantHold : nil
        if info.length == nil, let stored = shared.stored, stored.info.length != nil {
            // Another process stored the origin's head first: the machine knows what it would
            // have read had it opened the row now, and asks no origin past the resource's end.
            info = stored.info
            freshUntil = stored.freshUntil
            isServingStale = false
        }
    }

    /// Fetch `id` claimed the bytes of its next request in the index, which answered `claim` and
    /// held `shared` for generation `generation`.
    ///
    /// - Returns: the request to send (perhaps shorter than the one claimed for), or `nil`: the
    ///   fetch ends without an error, and its readers wait for the process that has the bytes.
    mutating func claimed(_ id: Int, _ claim: Claim, shared: Shared, generation: Int, now: Instant) -> FetchRequest? {
        refreshed(shared, generation: generation, now: now)
        guard case .granted(let granted) = claim, fetchesGoOn, generation == self.generation,
            var fetch = fetches[id], fetch.generation == generation, !fetch.isEnding,
            case .requesting(let first, let last) = fetch.state, first == fetch.next
        else { return nil }
        let end = min(last.map { $0 + 1 } ?? Int64.max, granted.map { $0 + 1 } ?? Int64.max, limit(of: fetch))
        guard first < end else { return nil }
        // Another process asked the origin at the same moment, and nothing is known of it yet:
        // the fetch's reader waits for that answer's head (``awaitFirstHead(reader:now:)``).
        if info.length == nil, let reader = fetch.account, awaitFirstHead(reader: reader, now: now) != nil {
            return nil
        }
        let newLast = end == Int64.max ? nil : end - 1
        fetch.state = .requesting(first: first, last: newLast)
        fetches[id] = fetch
        return FetchRequest(
            fetch: id,
            first: first,
            last: newLast,
            ifRange: ifRangeToSend,
            proof: proof(before: first)
        )
    }

    /// Whole-body fetch `id` claimed every byte from its position to the end; another process's
    /// claim to the end seen then means that process streams the body already.
    ///
    /// - Returns: whether the fetch reads its body on; if not, its readers wait for the other.
    mutating func claimedRest(_ id: Int, shared: Shared, generation: Int, now: Instant) -> Bool {
        refreshed(shared, generation: generation, now: now)
        return shared.foreignStream == nil
    }
}
