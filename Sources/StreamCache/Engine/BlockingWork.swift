import Foundation

/// Work that blocks its thread, run on threads of its own: a name looked up with `getaddrinfo`, a
/// write or sync of a data file on a disk that may hold it for seconds. It holds neither an event
/// loop nor a thread of the cooperative pool, which every task and actor of the engine share: on
/// Linux that pool is libdispatch's, which counts a thread waiting on the disk as busy and does
/// not grow, so two writes stuck on a slow disk would stop every task.
///
/// Each kind of work has its pool, of at most ``limit`` threads, started as work comes and kept
/// for the next; work beyond the limit waits its turn.
package final class BlockingWork: Sendable {
    /// Names looked up.
    package static let names = BlockingWork(limit: 8)
    /// Writes and syncs of data files.
    package static let disk = BlockingWork(limit: 16)

    /// Threads running work at once, at most.
    package let limit: Int
    private let state = ConditionLocked(State())

    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var threads = 0
        /// Threads waiting for a job.
        var idle = 0
    }

    package init(limit: Int) {
        self.limit = limit
    }

    /// Runs `body` on a thread of the pool and returns what it returned.
    package func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: body()) }
        }
    }

    /// Runs `body` on a thread of the pool and returns what it returned, or throws what it threw.
    package func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            submit { continuation.resume(with: Result { try body() }) }
        }
    }

    private func submit(_ job: @escaping @Sendable () -> Void) {
        let starts = state.withLockWakingOne { state in
            state.jobs.append(job)
            guard state.jobs.count > state.idle, state.threads < limit else { return false }
            state.threads += 1
            return true
        }
        if starts { Thread { self.work() }.start() }
    }

    /// A thread of the pool: takes the jobs in turn, for ever.
    private func work() {
        while true {
            state.withLock { $0.idle += 1 }
            let job = state.withLock(when: { !$0.jobs.isEmpty }) { state in
                state.idle -= 1
                return state.jobs.removeFirst()
            }
            job()
        }
    }
}
