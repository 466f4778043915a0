/// The engine's sessions by key and where each is in its life: leased while handles use it,
/// opening until its session is ready, open, lingering once its last lease is released, and
/// gone once closed. A pure value: ``CacheEngine`` asks it what to do and does the work (open
/// sessions, sleep, close) itself, so the rules are in one place and a model test can drive them
/// (`SessionTableModelTests`).
///
/// A key's lease count is kept apart from its session: a handle holds its lease while the
/// session opens, and a failed open leaves the lease for its holder to release.
struct SessionTable<Session: AnyObject, Opening> {
    enum State {
        case opening(Opening)
        case open(Session)
    }

    struct Entry {
        var state: State?
        var leases = 0
        /// When the last lease was released, while the session lingers open for a reader to
        /// come back.
        var releasedAt: ContinuousClock.Instant?

        var isEmpty: Bool { state == nil && leases == 0 && releasedAt == nil }
    }

    private(set) var entries: [String: Entry] = [:]

    /// The session of `key`, or its open in progress, if any.
    func state(_ key: String) -> State? { entries[key]?.state }

    /// Every open session.
    var openSessions: [(key: String, session: Session)] {
        entries.compactMap { key, entry in
            if case .open(let session) = entry.state { (key, session) } else { nil }
        }
    }

    /// The keys nobody holds a lease on.
    var unleasedKeys: [String] { entries.filter { $0.value.leases == 0 }.map(\.key) }

    /// A handle takes a lease on `key`.
    mutating func lease(_ key: String) {
        entries[key, default: Entry()].leases += 1
    }

    /// A handle gives its lease back.
    ///
    /// - Returns: whether to start a closer that waits out the linger: only for the last lease,
    ///   and only when none waits already (a later release just moves the time it waits for).
    mutating func release(_ key: String, now: ContinuousClock.Instant) -> Bool {
        guard var entry = entries[key], entry.leases > 0 else { return false }
        entry.leases -= 1
        guard entry.leases == 0 else {
            entries[key] = entry
            return false
        }
        let lingering = entry.releasedAt != nil
        entry.releasedAt = now
        entries[key] = entry
        return !lingering
    }

    mutating func startOpening(_ key: String, _ opening: Opening) {
        entries[key, default: Entry()].state = .opening(opening)
    }

    mutating func opened(_ key: String, _ session: Session) {
        entries[key, default: Entry()].state = .open(session)
    }

    /// The open failed, or the session is dropped (broken): the next lease opens a new one.
    mutating func forget(_ key: String) {
        update(key) { $0.state = nil }
    }

    /// What a closer waiting out the linger of `key` does next.
    enum LingerStep: Equatable {
        /// Sleep until then and ask again.
        case wait(until: ContinuousClock.Instant)
        /// Leased again: this closer ends; the next release starts another.
        case inUse
        /// The linger is over (or the engine is stopping): close the session if it is idle.
        case close
    }

    mutating func lingerStep(
        _ key: String,
        now: ContinuousClock.Instant,
        linger: Duration,
        stopping: Bool
    ) -> LingerStep {
        guard let entry = entries[key], let released = entry.releasedAt else { return .close }
        if entry.leases > 0 {
            update(key) { $0.releasedAt = nil }
            return .inUse
        }
        let due = released.advanced(by: linger)
        guard due > now, !stopping else {
            update(key) { $0.releasedAt = nil }
            return .close
        }
        return .wait(until: due)
    }

    /// Ends the linger of `key` at once (to make room, or to stop).
    mutating func stopLingering(_ key: String) {
        update(key) { $0.releasedAt = nil }
    }

    /// The session of `key` if it may be closed: open, without lease and not lingering.
    func closable(_ key: String) -> Session? {
        guard let entry = entries[key], entry.leases == 0, entry.releasedAt == nil,
            case .open(let session) = entry.state
        else { return nil }
        return session
    }

    /// Takes `session` out of the table if it is still the one of `key` and nobody leased it
    /// meanwhile (the caller awaited something since it looked).
    ///
    /// - Returns: whether it was taken out; the caller then closes it.
    mutating func close(_ key: String, _ session: Session) -> Bool {
        guard let entry = entries[key], entry.leases == 0, case .open(let current) = entry.state, current === session
        else { return false }
        update(key) { $0.state = nil }
        return true
    }

    /// Whether `session` is still the one of `key`.
    func isCurrent(_ key: String, _ session: Session) -> Bool {
        if case .open(let current) = entries[key]?.state { return current === session }
        return false
    }

    private mutating func update(_ key: String, _ change: (inout Entry) -> Void) {
        guard var entry = entries[key] else { return }
        change(&entry)
        entries[key] = entry.isEmpty ? nil : entry
    }
}
