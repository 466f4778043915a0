import Foundation
import StreamCacheTesting
import Testing

@testable import StreamCache

/// A fetch that failed leaves nothing in the cache, even when the shutdown that closes its
/// session runs in a cancelled task (the command line's, after Ctrl-C; or the engine's own
/// chores, which a shutdown cancels while a close of theirs is under way).
@Suite(.timeLimit(.minutes(3))) struct ShutdownResidueTests {
    @Test func aFailedFetchLeavesNoRowWhenTheShutdownIsCancelled() async throws {
        let fixture = try await EngineFixture.make()
        let engine = try fixture.engine()
        await #expect(throws: StreamCacheError.self) {
            _ = try await readAll(engine, fixture.origin.url("/nope.mp3"))
        }
        await withTaskGroup(of: Void.self) { group in
            group.cancelAll()
            // Starts cancelled: the group is.
            group.addTask { await engine.shutdown() }
        }
        let left = try await engine.resources()
        #expect(left.isEmpty, "rows left: \(left.map(\.0.url))")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: fixture.directory.dataDirectory)) ?? []
        #expect(files.isEmpty, "data files left: \(files)")
        await fixture.tearDown()
    }
}
