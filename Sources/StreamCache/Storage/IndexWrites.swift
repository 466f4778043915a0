import Foundation
import GRDB

/// The index's writes, committed in groups: writes asked for while a transaction runs wait and
/// go into the next one together, each in a savepoint of its own.
///
/// Every session of a busy engine writes its claims and ranges (a handful of small writes per
/// resource, eight sessions at once for eight players of HLS segments), and a transaction's
/// fixed costs (its locks, the WAL frames of the pages it changed, a hop to the writer's queue
/// and back) outweigh such a write. A group pays them once. Each write still sees the ones
/// before it and is atomic on its own: one that throws is rolled back to its savepoint and
/// gets its error, and the others are committed. Each caller resumes after the commit of its
/// group, so what it wrote is durable in the index when it goes on, as with a transaction of
/// its own; if the commit fails (or SQLite gave the transaction up, on a full disk for one),
/// every write of the group gets the error and none of them is kept.
final class IndexWrites: Sendable {
    /// One caller's write: its body, and how to resume the caller.
    private struct Job {
        let body: (Database) throws -> Void
        let finish: (Error?) -> Void
    }

    private let writer: any DatabaseWriter
    /// The writes waiting for the next group, and whether a drain runs on the writer's queue.
    private let queue = Locked((pending: [Job](), draining: false))

    init(_ writer: any DatabaseWriter) {
        self.writer = writer
    }

    /// Runs `body` in the next group's transaction and returns its result once that commits.
    /// A write asked for is carried out even if its task is cancelled meanwhile: a fetch that is
    /// cancelled still records the bytes it made durable, and ends its claim.
    func write<T: Sendable>(_ body: @Sendable @escaping (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            let result = Locked<T?>(nil)
            let job = Job(
                body: { db in
                    let value = try body(db)
                    result.withLock { $0 = value }
                },
                finish: { error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let value = result.withLock({ $0 }) {
                        continuation.resume(returning: value)
                    } else {
                        continuation.resume(throwing: StreamCacheError(.index, "a cache index write left no result"))
                    }
                }
            )
            enqueue(job)
        }
    }

    /// Runs `body` in the next group's transaction without waiting for it: a write asked for
    /// after it commits in the same group or a later one, and sees it. `onFailure` gets its
    /// error, on the writer's queue.
    func post(_ body: @Sendable @escaping (Database) throws -> Void, onFailure: @escaping @Sendable (Error) -> Void) {
        enqueue(Job(body: body, finish: { error in error.map(onFailure) }))
    }

    private func enqueue(_ job: Job) {
        let startsDrain = queue.withLock { queue in
            queue.pending.append(job)
            defer { queue.draining = true }
            return !queue.draining
        }
        if startsDrain { writer.asyncWriteWithoutTransaction { db in self.drain(db) } }
    }

    /// Commits group after group on the writer's queue until no write waits.
    private func drain(_ db: Database) {
        while let jobs = takePending() {
            commit(jobs, in: db)
        }
    }

    private func takePending() -> [Job]? {
        queue.withLock { queue in
            guard !queue.pending.isEmpty else {
                queue.draining = false
                return nil
            }
            defer { queue.pending.removeAll(keepingCapacity: true) }
            return queue.pending
        }
    }

    private func commit(_ jobs: [Job], in db: Database) {
        var failures = [Error?](repeating: nil, count: jobs.count)
        do {
            // The transaction and its savepoints by cached statements: GRDB's `inTransaction`
            // and `inSavepoint` prepare theirs each time, which costs more than a small write.
            try run("BEGIN IMMEDIATE", in: db)
            do {
                if jobs.count == 1 {
                    // Alone, the transaction is its savepoint.
                    try jobs[0].body(db)
                } else {
                    for (position, job) in jobs.enumerated() {
                        failures[position] = try inSavepoint(job, in: db)
                    }
                }
                try run("COMMIT", in: db)
            } catch {
                if db.isInsideTransaction { try? run("ROLLBACK", in: db) }
                throw error
            }
        } catch {
            for job in jobs { job.finish(error) }
            return
        }
        for (job, failure) in zip(jobs, failures) { job.finish(failure) }
    }

    /// Runs `job` in a savepoint of the group's transaction.
    ///
    /// - Returns: the job's error, its savepoint rolled back.
    /// - Throws: the job's error if SQLite gave up the whole transaction with it (a full disk,
    ///   an I/O error): then nothing of the group is kept.
    private func inSavepoint(_ job: Job, in db: Database) throws -> Error? {
        try run("SAVEPOINT write", in: db)
        var failure: Error?
        do {
            try job.body(db)
        } catch {
            guard db.isInsideTransaction else { throw error }
            try run("ROLLBACK TO write", in: db)
            failure = error
        }
        try run("RELEASE write", in: db)
        return failure
    }

    private func run(_ sql: String, in db: Database) throws {
        try db.cachedStatement(sql: sql).execute()
    }
}
