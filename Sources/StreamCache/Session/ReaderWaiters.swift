import Foundation

/// The readers of a session waiting for its state to change, each resumed exactly once (and, in
/// a second instance, the whole-body fetches holding their body for a reader to come).
///
/// Every change ends an *epoch*. A reader notes the epoch before it asks the state machine what
/// to do, and waits only if no change came in between, so no wake-up is lost while the reader
/// moves from the session's actor to its wait. A lock rather than actor isolation, so a
/// cancelled reader is resumed from its cancellation handler at once, with no task started.
final class ReaderWaiters: Sendable {
    private struct State {
        var parked: [Int: CheckedContinuation<Void, Never>] = [:]
        var changes = 0
    }

    private let state = Locked(State())

    /// The current epoch.
    var epoch: Int { state.value.changes }

    /// Suspends reader `id` until the next change, unless one came since `seen` or its task is
    /// cancelled.
    func wait(_ id: Int, unlessChangedSince seen: Int) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // Cancellation is flagged before its handler runs, and both sides take the lock:
                // either the handler finds the continuation parked, or the check below sees the flag.
                let resumeNow = state.withLock { state in
                    if Task.isCancelled || state.changes != seen { return true }
                    state.parked[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.parked.removeValue(forKey: id) }?.resume()
        }
    }

    /// Suspends `id` as ``wait(_:unlessChangedSince:)`` does, and no later than `deadline`.
    func wait(_ id: Int, unlessChangedSince seen: Int, until deadline: ContinuousClock.Instant) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.wait(id, unlessChangedSince: seen) }
            group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Ends the epoch and resumes every waiting reader.
    func wakeAll() {
        let all = state.withLock { state in
            state.changes &+= 1
            defer { state.parked.removeAll() }
            return state.parked
        }
        for continuation in all.values { continuation.resume() }
    }
}
