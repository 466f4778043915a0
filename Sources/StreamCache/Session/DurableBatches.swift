import Foundation

/// The batches of one fetch being made durable and recorded, one sync at a time, off the fetch's
/// path: the fetch hands a batch over and goes on receiving at once.
///
/// Batches handed over while a sync runs wait and are merged into one (one `fdatasync` covers
/// every byte written before it starts), so a slow disk makes syncs larger, not more numerous,
/// and never holds up the readers of the fetch. The kernel bounds the dirty pages in between.
final class DurableBatches: @unchecked Sendable {
    private struct Batch {
        var ranges: ByteRangeSet
        let generation: Int
        let file: CacheFile
    }

    /// Syncs a file, then records a batch of a version (``ResourceSession/makeDurable(_:generation:file:)``).
    typealias MakeDurable = @Sendable (ByteRangeSet, _ generation: Int, CacheFile) async -> Void

    private let makeDurable: MakeDurable
    private struct Queue {
        var waiting: [Batch] = []
        var syncing = false
    }

    private let queue = Locked(Queue())
    /// Used by the fetch's runner only.
    private var worker: Task<Void, Never>?

    init(_ makeDurable: @escaping MakeDurable) {
        self.makeDurable = makeDurable
    }

    /// Makes `batch` (of version `generation`) durable in `file` and records it, after the
    /// batches handed over before it; returns at once.
    func start(_ batch: ByteRangeSet, generation: Int, file: CacheFile) {
        let startsWorker = queue.withLock { queue in
            if let last = queue.waiting.indices.last, queue.waiting[last].generation == generation,
                queue.waiting[last].file === file
            {
                queue.waiting[last].ranges = queue.waiting[last].ranges.union(batch)
            } else {
                queue.waiting.append(Batch(ranges: batch, generation: generation, file: file))
            }
            defer { queue.syncing = true }
            return !queue.syncing
        }
        // Owned by this fetch's runner: awaited by `finish()`.
        if startsWorker { worker = Task { await self.syncWaiting() } }
    }

    /// Waits until every batch handed over is durable and recorded.
    func finish() async {
        await worker?.value
        worker = nil
    }

    private func syncWaiting() async {
        while let batch = takeNext() {
            await makeDurable(batch.ranges, batch.generation, batch.file)
        }
    }

    private func takeNext() -> Batch? {
        queue.withLock { queue in
            guard !queue.waiting.isEmpty else {
                queue.syncing = false
                return nil
            }
            return queue.waiting.removeFirst()
        }
    }
}
