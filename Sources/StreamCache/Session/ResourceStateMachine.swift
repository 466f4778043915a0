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
struct ResourceStateMachine: Sendable {
    typealias Instant = ContinuousClock.Instant

    let settings: Settings
    /// What the origin has said about the current version.
    var info: ContentInfo
    /// Counts versions of the resource seen by this session; fetches and syncs carry the one
    /// they belong to.
    var generation = 0
    var written: ByteRangeSet
    var durable: ByteRangeSet
    var recorded: ByteRangeSet
    /// Bytes fetches were told to write and have not yet reported written.
    var writing = ByteRangeSet()
    /// Bytes fetches of other processes sharing the cache directory have claimed (asked their
    /// origin for); they are not this process's to fetch or write.
    var foreign = ByteRangeSet()
    /// Where another process's claim to the end starts: its origin sends whole bodies, and it
    /// keeps every byte from there on.
    var foreignStream: Int64?
    /// Until when a reader of another process is known to wait for this process's whole-body
    /// stream (``othersWantStream(at:)``).
    var othersWantStreamUntil: Instant?
    /// Origin body bytes received while no reader was there to be charged for them.
    var unattributed: Int64 = 0
    var readers: [Int: Reader] = [:]
    var fetches: [Int: Fetch] = [:]
    var phase = Phase.ready
    /// Until when the cached version may be reused without asking the origin (RFC 9111 §4.2:
    /// its freshness, from the origin's last word on it); `nil`: ask first.
    var freshUntil: Instant?
    /// Whether the origin could not be reached to check a stale version, which is served as it
    /// is (RFC 9111 §4.2.4) until the origin answers again.
    var isServingStale = false
    /// Whether a check of the version runs while readers go on (``ReadAction/checkInBackground(_:)``).
    var checksInBackground = false
    /// Whether the origin answered `If-Range` with `304`; requests go without it then.
    var ifRangeRefused = false
    /// Whether the origin sent the cached bytes under another entity tag: its tags say nothing of
    /// its bytes, so ranges join the cached ones only as bytes prove (``proof(before:)``).
    var tagsRotate = false
    /// Whether the next check of the version must be proven by bytes, whatever the validators
    /// say: a reader came with other values of the query parameters the key leaves out, which
    /// may give other content under the same tag (``ResourceSession/opened(with:headers:)``).
    var bytesMustProve = false
    /// What the origin does with a request for a range, as this resource's answers or, by its
    /// session, another resource's of the same origin said; `unknown` until the first answer
    /// of an origin its session has not met. `honoured` asks nothing of a reader.
    var rangeSupport = OriginRangeSupport.Support.honoured
    /// Whether the origin is known to answer a request for a range with the whole body.
    var ignoresRange: Bool { rangeSupport == .ignored }

    /// A reader came with other values of the query parameters the key leaves out than the
    /// cached bytes were fetched with: the next check of the version is proven by bytes.
    mutating func otherTokensCame() { bytesMustProve = true }

    /// What the origin's other resources said it does with a request for a range, for a
    /// resource nothing is known of yet.
    mutating func originRangesAre(_ support: OriginRangeSupport.Support) { rangeSupport = support }
    /// When the index was last read for ranges another process recorded.
    var refreshedAt: Instant
    var lastID = 0

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
