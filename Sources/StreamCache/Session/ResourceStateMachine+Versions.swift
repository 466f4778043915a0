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
