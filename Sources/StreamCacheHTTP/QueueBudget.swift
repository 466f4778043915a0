import Foundation
import StreamCache

/// The bytes every ``ResponseQueue`` of one client may hold between them.
///
/// Each queue may hold up to its own limit while the budget lasts, and a small minimum
/// whatever the others hold, so no fetch waits for another's reader. A fast fetch or two still
/// get their full queue; hundreds at once, each faster than the cache can write it, share the
/// budget instead of holding 1 MiB apiece.
final class QueueBudget: Sendable {
    /// The most the queues hold between them, beyond their minimums.
    let bytes: Int
    private let held = Locked(0)

    init(bytes: Int) {
        self.bytes = bytes
    }

    /// Whether the queues hold the whole budget.
    var isSpent: Bool { held.value >= bytes }

    /// Counts `count` bytes a queue took in (positive) or handed on (negative).
    func add(_ count: Int) {
        held.withLock { $0 += count }
    }
}
