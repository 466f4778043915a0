import Foundation
import Testing

@testable import StreamCache

/// A fetch used to wait for the previous batch's `fdatasync` before it went on, so the disk's
/// sync rate capped every cold read. Batches are now handed over at once, and those handed over
/// while a sync runs are merged into the next one.
@Suite struct DurableBatchesTests {
    /// The syncs asked for, in order; each waits until it is let go.
    private actor Syncs {
        private(set) var asked: [(ByteRangeSet, Int)] = []
        private var held: [CheckedContinuation<Void, Never>] = []
        private var letGo = false

        func sync(_ ranges: ByteRangeSet, generation: Int) async {
            asked.append((ranges, generation))
            guard !letGo else { return }
            await withCheckedContinuation { held.append($0) }
        }

        func letAllGo() {
            letGo = true
            for continuation in held { continuation.resume() }
            held.removeAll()
        }
    }

    @Test func aSlowSyncHoldsNothingUpAndWhatWaitsIsMergedByVersion() async throws {
        let path = NSTemporaryDirectory() + "durable-batches-\(UUID().uuidString)"
        let file = try await CacheFile.openLocked(path: path)
        defer { unlink(path) }
        let syncs = Syncs()
        let batches = DurableBatches { ranges, generation, _ in await syncs.sync(ranges, generation: generation) }

        batches.start(ByteRangeSet([ByteRange(0, 10)]), generation: 1, file: file)
        while await syncs.asked.isEmpty { try await Task.sleep(for: .milliseconds(1)) }
        // The first sync is held; handing over more returns at once all the same.
        batches.start(ByteRangeSet([ByteRange(10, 20)]), generation: 1, file: file)
        batches.start(ByteRangeSet([ByteRange(20, 30)]), generation: 1, file: file)
        batches.start(ByteRangeSet([ByteRange(0, 5)]), generation: 2, file: file)
        #expect(await syncs.asked.count == 1)

        await syncs.letAllGo()
        await batches.finish()
        let asked = await syncs.asked
        #expect(
            asked.map(\.0) == [
                ByteRangeSet([ByteRange(0, 10)]), ByteRangeSet([ByteRange(10, 30)]), ByteRangeSet([ByteRange(0, 5)]),
            ]
        )
        #expect(asked.map(\.1) == [1, 1, 2])
    }
}
