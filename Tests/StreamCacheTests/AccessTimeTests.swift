import Foundation
import StreamCacheTesting
import Testing

@testable import StreamCache

/// Access times order eviction and nothing else, so a read never waits to record one: another
/// process evicting thousands of resources holds the index's write lock transaction after
/// transaction, and a first touch that wrote its access time waited for it (up to 80 ms a read
/// in bench/evict.sh, and up to the 30 s busy timeout).
@Suite(.timeLimit(.minutes(3))) struct AccessTimeTests {
    @Test func aCachedReadGoesOnWhileAnotherProcessHoldsTheIndexLock() async throws {
        let fixture = try await EngineFixture.make()
        let data = TestData.bytes(count: 100_000, seed: 3)
        fixture.origin.setResource(data, at: "/seg.ts")
        let url = fixture.origin.url("/seg.ts")
        let first = try fixture.engine()
        #expect(try await readAll(first, url) == data)
        await first.shutdown()
        let before = try #require(try await first.index.resource(forKey: first.configuration.key(url))).lastAccess

        // Another process takes the index's write lock and keeps it until told to let go.
        let second = try fixture.engine()
        let holder = try await IndexLockHolder.start(path: fixture.directory.indexPath)
        let read = Task { try await readAll(second, url) }
        // A read that waited for the lock would still be waiting after 5 s (it waits up to 30 s).
        let finished = try await onTime(.seconds(5)) { try await read.value }
        #expect(finished == data, "the read waited for the index lock another process held")
        #expect(holder.isHolding)

        await holder.release()
        await second.shutdown()
        // Once the lock is free the access time is recorded.
        let after = try #require(try await second.index.resource(forKey: second.configuration.key(url))).lastAccess
        #expect(after > before)
        await fixture.tearDown()
    }

    @Test func whatWasReadLastIsNotEvictedFirstThoughItsTimeWasNotWrittenYet() async throws {
        let fixture = try await EngineFixture.make()
        let bytes = TestData.bytes(count: 300_000, seed: 4)
        for name in ["old", "new"] { fixture.origin.setResource(bytes, at: "/\(name).ts") }
        let filler = try fixture.engine()
        for name in ["old", "new"] {
            #expect(try await readAll(filler, fixture.origin.url("/\(name).ts")) == bytes)
            try await Task.sleep(for: .milliseconds(20))
        }
        await filler.shutdown()
        // A new engine reads "old" again, then evicts at once: its access time is still pending.
        let engine = try fixture.engine { $0.maxSize = 400_000 }
        #expect(try await readAll(engine, fixture.origin.url("/old.ts")) == bytes)
        await engine.shutdown()
        let kept = try await engine.resources().filter { $0.1.count > 0 }.map(\.0.url)
        #expect(kept == [fixture.origin.url("/old.ts").absoluteString], "kept \(kept)")
        await fixture.tearDown()
    }

    /// `body`'s result, or a failure if it takes longer than `limit`.
    private func onTime<T: Sendable>(
        _ limit: Duration,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            guard let first = try await group.next(), let value = first else {
                group.cancelAll()
                throw CancellationError()
            }
            group.cancelAll()
            return value
        }
    }
}

/// A python3 process holding `BEGIN IMMEDIATE` on a SQLite database until released. Starting
/// and stopping it block, so they run on threads of their own: a blocked thread of the test
/// pool (two on two cores) stalls every test of the run.
private final class IndexLockHolder: @unchecked Sendable {
    private let process = ChildProcess()
    private let input = Pipe()

    static func start(path: String) async throws -> IndexLockHolder {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try IndexLockHolder(path: path) }) }.start()
        }
    }

    private init(path: String) throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c",
            """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1], timeout=30, isolation_level=None)
            c.execute("BEGIN IMMEDIATE")
            print("locked", flush=True)
            sys.stdin.read()
            c.execute("ROLLBACK")
            """,
            path,
        ]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let line = output.fileHandleForReading.availableData
        guard String(decoding: line, as: UTF8.self).hasPrefix("locked") else {
            throw CocoaError(.fileLocking)
        }
    }

    var isHolding: Bool { process.isRunning }

    func release() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                if self.process.isRunning {
                    try? self.input.fileHandleForWriting.close()
                    self.process.waitUntilExit()
                }
                continuation.resume()
            }.start()
        }
    }
}
