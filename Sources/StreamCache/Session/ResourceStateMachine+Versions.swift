extension ResourceStateMachine {
    /// What the origin said when asked whether the cached version is current.
    enum Validation: Sendable {
        /// Same validators and length: the cached bytes are good.
        case current
        /// A new version, described so.
        case changed(ContentInfo)
        /// No answer (offline): the cached bytes are served as they are.
        case unreachable
        /// The reader asking went away before the answer: another reader asks again.
        case abandoned
    }

    /// The origin answered the validation a reader was told to make.
    ///
    /// - Returns: the new version to move to (then ``versionReplaced(now:)``) and the fetches to
    ///   cancel, if the resource changed.
    mutating func validated(_ result: Validation, now: Instant) -> (ContentInfo, cancel: [Int])? {
        defer { checkInvariants() }
        guard phase == .validating else { return nil }
        phase = .ready
        let forced = validationForced
        validationForced = false
        if case .abandoned = result { return nil }
        validatedAt = now
        switch result {
        case .changed(let newInfo):
            return (newInfo, replaceVersion(with: newInfo, survivor: nil))
        case .current where !info.hasValidator && (forced || !info.isComplete(with: written)):
            // Same length, but nothing says the bytes cached before are of the version the
            // missing ones will come from (or, asked to check, that they are current): start
            // again rather than combine them.
            return (info, replaceVersion(with: info, survivor: nil))
        default:
            return nil
        }
    }

    /// Moves to a new version: nothing of the old one is readable any more; readers that already
    /// got old bytes fail with `resourceChanged`, the others go on with new bytes; fetches of the
    /// old version, except `survivor` (the one that saw the new version), are stale.
    ///
    /// - Returns: the stale fetches, to cancel.
    mutating func replaceVersion(with newInfo: ContentInfo, survivor: Int?) -> [Int] {
        generation += 1
        info = newInfo
        phase = .replacing
        written = RangeSet()
        durable = RangeSet()
        recorded = RangeSet()
        writing = RangeSet()
        // Claims are of the old version's row; the index drops them with it.
        foreign = RangeSet()
        foreignStream = nil
        var stale: [Int] = []
        for (id, fetch) in fetches where !fetch.isEnding {
            if id == survivor {
                // What it wrote before belongs to the old version: never synced or recorded.
                fetches[id]?.generation = generation
                fetches[id]?.unsynced = RangeSet()
                fetches[id]?.unsyncedBytes = 0
                fetches[id]?.pendingWrites = RangeSet()
            } else {
                stale.append(id)
            }
        }
        for (id, reader) in readers {
            readers[id]?.cachedAtStart = RangeSet()
            if let waitingOn = reader.waitingOn, waitingOn != survivor { readers[id]?.waitingOn = nil }
            if reader.hasDelivered {
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
        validatedAt = now
    }

    /// The new version's index row or file could not be made: nothing can be read or written.
    mutating func replacementFailed(_ error: StreamCacheError) {
        phase = .broken(error)
    }
}
