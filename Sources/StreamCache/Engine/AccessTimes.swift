import Foundation

/// When each resource was last opened, held until the engine writes them to the index in one
/// transaction (``CacheEngine`` does so a moment after the first note, before an eviction and at
/// shutdown).
///
/// Access times only order eviction, so an open never waits for them: a write to the index waits
/// for its lock, which another process evicting thousands of resources holds again and again
/// (a first touch of a cached resource would wait for that), and one transaction for
/// many opens costs less than one each.
final class AccessTimes: Sendable {
    private let pending = Locked<[Int64: Double]>([:])
    private let onFirstNote: @Sendable () -> Void

    /// - Parameter onFirstNote: called when a note arrives with none pending, so that someone
    ///   writes them.
    init(onFirstNote: @escaping @Sendable () -> Void) {
        self.onFirstNote = onFirstNote
    }

    /// Notes that resource `id` was opened now.
    func note(_ id: Int64, at time: Double = Date().timeIntervalSince1970) {
        let first = pending.withLock { pending in
            defer { pending[id] = time }
            return pending.isEmpty
        }
        if first { onFirstNote() }
    }

    /// Whether times are noted and not taken yet.
    var hasPending: Bool { pending.withLock { !$0.isEmpty } }

    /// Takes the pending times, leaving none.
    func take() -> [Int64: Double] {
        pending.withLock { pending in
            defer { pending = [:] }
            return pending
        }
    }
}
