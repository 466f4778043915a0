import Foundation
import Testing

@testable import StreamCache

/// A whole body held for a reader to come waits on ``ReaderWaiters`` until a reader wakes it or
/// its grace ends; it used to look every 20 ms instead.
///
/// The deadlines are far (5 minutes) and a wait is judged ended early if it ends well before
/// (4 minutes): beside the whole suite on two cores, a task woken at once still waited 36-47 s
/// for a thread of the cooperative pool.
@Suite struct ReaderWaitersTests {
    private static let deadline = Duration.seconds(300)
    private static let early = Duration.seconds(240)

    @Test func aWaitWithADeadlineIsWokenByAChangeLongBeforeIt() async {
        let waiters = ReaderWaiters()
        let epoch = waiters.epoch
        let started = ContinuousClock.now
        let waiting = Task { await waiters.wait(1, unlessChangedSince: epoch, until: started + Self.deadline) }
        // Woken however soon the wait parks: a change after the epoch was noted is never lost.
        try? await Task.sleep(for: .milliseconds(50))
        waiters.wakeAll()
        await waiting.value
        #expect(started.duration(to: .now) < Self.early, "the wait ran to its deadline")
    }

    @Test func aWaitNobodyWakesEndsAtItsDeadline() async {
        let waiters = ReaderWaiters()
        let deadline = ContinuousClock.now + .milliseconds(100)
        await waiters.wait(1, unlessChangedSince: waiters.epoch, until: deadline)
        #expect(ContinuousClock.now >= deadline)
        // Nothing of the ended wait is left parked: the next change resumes only those after it.
        waiters.wakeAll()
    }

    @Test func aChangeBeforeTheWaitEndsItAtOnce() async {
        let waiters = ReaderWaiters()
        let epoch = waiters.epoch
        waiters.wakeAll()
        let started = ContinuousClock.now
        await waiters.wait(1, unlessChangedSince: epoch, until: started + Self.deadline)
        #expect(started.duration(to: .now) < Self.early, "a change before the wait was lost")
    }

    @Test func aCancelledWaitEndsBeforeItsDeadline() async {
        let waiters = ReaderWaiters()
        let started = ContinuousClock.now
        let waiting = Task { await waiters.wait(1, unlessChangedSince: waiters.epoch, until: started + Self.deadline) }
        try? await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await waiting.value
        #expect(started.duration(to: .now) < Self.early, "a cancelled wait ran to its deadline")
    }
}
