import Foundation
import Testing

@testable import StreamCache

/// A whole body held for a reader to come waits on ``ReaderWaiters`` until a reader wakes it or
/// its grace ends; it used to look every 20 ms instead.
@Suite struct ReaderWaitersTests {
    @Test func aWaitWithADeadlineIsWokenByAChangeLongBeforeIt() async {
        let waiters = ReaderWaiters()
        let epoch = waiters.epoch
        let started = ContinuousClock.now
        let waiting = Task { await waiters.wait(1, unlessChangedSince: epoch, until: started + .seconds(60)) }
        // Woken however soon the wait parks: a change after the epoch was noted is never lost.
        try? await Task.sleep(for: .milliseconds(50))
        waiters.wakeAll()
        await waiting.value
        #expect(started.duration(to: .now) < .seconds(30), "the wait ran to its deadline")
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
        await waiters.wait(1, unlessChangedSince: epoch, until: started + .seconds(60))
        #expect(started.duration(to: .now) < .seconds(30), "a change before the wait was lost")
    }

    @Test func aCancelledWaitEndsBeforeItsDeadline() async {
        let waiters = ReaderWaiters()
        let started = ContinuousClock.now
        let waiting = Task { await waiters.wait(1, unlessChangedSince: waiters.epoch, until: started + .seconds(60)) }
        try? await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await waiting.value
        #expect(started.duration(to: .now) < .seconds(30), "a cancelled wait ran to its deadline")
    }
}
