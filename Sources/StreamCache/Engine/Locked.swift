import Foundation

/// State shared between threads, reached only under its lock: the one lock-guarded box of the
/// package. (An `NSLock` rather than `Mutex`, which needs iOS 18.)
package final class Locked<State>: @unchecked Sendable {
    private let lock = NSLock()
    private var state: State

    package init(_ state: State) {
        self.state = state
    }

    /// Runs `body` with the state, under the lock; keep it short and never wait in it.
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try lock.withLock { try body(&state) }
    }

    /// Runs `body` with the state if the lock is free now; `nil`, at once, if another thread
    /// holds it (for an event loop, which must not wait).
    package func withLockIfAvailable<Result>(_ body: (inout State) throws -> Result) rethrows -> Result? {
        guard lock.try() else { return nil }
        defer { lock.unlock() }
        return try body(&state)
    }

    /// A copy of the state.
    package var value: State {
        lock.withLock { state }
    }
}
