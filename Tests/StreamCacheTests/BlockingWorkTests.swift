import Foundation
import Testing

@testable import StreamCache

/// Work that blocks its thread runs beside the caller, never more of it at once than the limit,
/// and every piece of a flood ends.
@Suite struct BlockingWorkTests {
    @Test func aFloodRunsAtMostTheLimitAtOnceAndAllOfItEnds() async {
        let running = Locked((now: 0, most: 0))
        let results = await withTaskGroup(of: Int.self) { group in
            for index in 0..<(BlockingWork.names.limit * 3) {
                group.addTask {
                    await BlockingWork.names.run {
                        running.withLock {
                            $0.now += 1; $0.most = max($0.most, $0.now)
                        }
                        usleep(50_000)
                        running.withLock { $0.now -= 1 }
                        return index
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.sorted() == Array(0..<(BlockingWork.names.limit * 3)))
        #expect(running.value.most == BlockingWork.names.limit)
    }
}
