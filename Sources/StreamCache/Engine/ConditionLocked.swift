import Foundation

/// State shared between threads, reached only under its lock, which a thread of its own can wait
/// on until the state is as it needs (``Locked`` for everything else: it cannot be waited on).
package final class ConditionLocked<State>: @unchecked Sendable {
    private let condition = NSCondition()
    private var state: State

    package init(_ state: State) {
        self.state = state
    }

    /// Runs `body` with the state, under the lock.
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        condition.lock()
        defer { condition.unlock() }
        return try body(&state)
    }

    /// Runs `body` with the state, under the lock, then wakes one thread waiting in
    /// ``withLock(when:_:)``.
    package func withLockWakingOne<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        condition.lock()
        defer {
            condition.signal()
            condition.unlock()
        }
        return try body(&state)
    }

    /// Waits until `ready` holds of the state, then runs `body` with it, under the lock. It blocks
    /// its thread: only for threads of their own (``BlockingWork``), never a task's or an event
    /// loop's.
    package func withLock<Result>(
        when ready: (State) -> Bool,
        _ body: (inout State) throws -> Result
    ) rethrows -> Result {
        condition.lock()
        defer { condition.unlock() }
        while !ready(state) { condition.wait() }
        return try body(&state)
    }
}
