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
