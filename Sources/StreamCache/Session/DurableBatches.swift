import Foundation

/// The batches of one fetch being made durable and recorded, one sync at a time, off the fetch's
/// path: the fetch hands a batch over and goes on receiving at once.
///
/// Batches handed over while a sync runs wait and are merged into one (one `fdatasync` covers
/// every byte written before it starts), so a slow disk makes syncs larger, not more numerous,
/// and never holds up the readers of the fetch. The kernel bounds the dirty pages in between.
final class DurableBatches: @unchecked Sendable {
    private struct Batch {
        var ranges: RangeSet
        let generation: Int
        let file: CacheFile
    }

    // `waiting` and `syncing` are guarded by `lock`; `worker` is used by the fetch's runner only.
    private let lock = NSLock()
    private var waiting: [Batch] = []
    private var syncing = false
    private var worker: Task<Void, Never>?

    /// Syncs `file` and then records `batch` (of version `generation`) through `session`, after
    /// the batches handed over before it.
    func start(_ batch: RangeSet, generation: Int, file: CacheFile, session: ResourceSession) {
        let startsWorker = lock.withLock {
            if let last = waiting.indices.last, waiting[last].generation == generation, waiting[last].file === file {
                waiting[last].ranges = waiting[last].ranges.union(batch)
            } else {
                waiting.append(Batch(ranges: batch, generation: generation, file: file))
            }
            defer { syncing = true }
            return !syncing
        }
        // Owned by this fetch's runner: awaited by `finish()`.
        if startsWorker { worker = Task { await self.syncWaiting(through: session) } }
    }

    /// Waits until every batch handed over is durable and recorded.
    func finish() async {
        await worker?.value
        worker = nil
    }

    private func syncWaiting(through session: ResourceSession) async {
        while let batch = takeNext() {
            await session.makeDurable(batch.ranges, generation: batch.generation, file: batch.file)
        }
    }

    private func takeNext() -> Batch? {
        lock.withLock {
            guard !waiting.isEmpty else {
                syncing = false
                return nil
            }
            return waiting.removeFirst()
        }
    }
}
