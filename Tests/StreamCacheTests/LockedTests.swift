import Dispatch
import Foundation
import Testing

@testable import StreamCache

/// `Locked`, the package's one lock-guarded box: what an event loop may ask of it without waiting.
@Suite struct LockedTests {
    @Test func aLockHeldElsewhereIsNotWaitedFor() async throws {
        let box = Locked(0)
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = Thread {
            box.withLock { value in
                value = 1
                held.signal()
                release.wait()
            }
        }
        holder.start()
        held.wait()
        // Held by the other thread: an answer at once, and no state read or written.
        #expect(box.withLockIfAvailable { $0 += 10 } == nil)
        release.signal()
        while box.withLockIfAvailable({ $0 }) == nil { usleep(1000) }
        #expect(box.withLockIfAvailable { value -> Int in
            value += 10
            return value
        } == 11)
    }
}
