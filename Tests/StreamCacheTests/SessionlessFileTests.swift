import Foundation
import StreamCacheTesting
import Testing

@testable import StreamCache

/// What a server sends of a cached resource no session of its process has open
/// (``CacheEngine/sessionlessFile(key:)``): the recorded bytes of a fresh version whose file is as the
/// index last saw it; anything else is left to a session.
@Suite(.timeLimit(.minutes(3))) struct SessionlessFileTests {
    @Test func aFreshCachedResourceIsSentWithoutASessionAndAnythingElseIsNot() async throws {
        let fixture = try await EngineFixture.make()
        let data = TestData.bytes(count: 300_000, seed: 8)
        fixture.origin.setResource(data, at: "/seg.ts")
        fixture.origin.setResource(data, at: "/part.ts")
        let url = fixture.origin.url("/seg.ts")
        let filler = try fixture.engine()
        #expect(try await readAll(filler, url) == data)
        #expect(
            try await readAll(filler, fixture.origin.url("/part.ts"), length: 100_000) == Array(data.prefix(100_000))
        )
        await filler.shutdown()

        let engine = try fixture.engine()
        let key = engine.configuration.key(url)
        let resting = try #require(engine.sessionlessFile(key: key))
        #expect(resting.covers(ByteRange(0, 300_000)))
        var bytes = [UInt8](repeating: 0, count: 4096)
        let read = try bytes.withUnsafeMutableBytes { try resting.file.read(into: $0, at: 200_000) }
        #expect(read == 4096 && bytes == Array(data[200_000..<204_096]))
        #expect(await engine.opened == 0, "a session was opened")
        // Part of a resource: what is recorded, no more.
        let part = try #require(engine.sessionlessFile(key: engine.configuration.key(fixture.origin.url("/part.ts"))))
        #expect(part.covers(ByteRange(0, 100_000)) && !part.covers(ByteRange(0, 100_001)))
        #expect(engine.sessionlessFile(key: engine.configuration.key(fixture.origin.url("/never.ts"))) == nil)

        // A copy the origin must be asked about first: a session's work.
        let strict = try fixture.engine { $0.revalidationInterval = .zero }
        #expect(strict.sessionlessFile(key: key) == nil)
        // A file changed behind the cache's back: read against its checksums by a session first.
        let path = fixture.directory.dataPath(id: resting.fileID(in: fixture.directory))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seek(toOffset: 10)
        try handle.write(contentsOf: Data([0xFF]))
        try handle.close()
        #expect(engine.sessionlessFile(key: key) == nil)
        #expect(try await readAll(engine, url) == data)
        await engine.shutdown()
        // A pipe planted where the file was: refused at once, never waited on.
        unlink(path)
        #expect(mkfifo(path, 0o600) == 0)
        #expect(engine.sessionlessFile(key: key) == nil)
        await strict.shutdown()
        await fixture.tearDown()
    }
}

extension SessionlessFileTests {
    /// A resource answered from the index stays open for its next ranges (one index read and one
    /// open for a player's many ranges), and is let go a second after its last use, or at once
    /// when its file is replaced.
    @Test func whatWasAnsweredFromTheIndexStaysOpenForABriefWhile() async throws {
        let fixture = try await EngineFixture.make()
        let data = TestData.bytes(count: 100_000, seed: 9)
        fixture.origin.setResource(data, at: "/big.mp4")
        let url = fixture.origin.url("/big.mp4")
        let filler = try fixture.engine()
        #expect(try await readAll(filler, url) == data)
        await filler.shutdown()

        let engine = try fixture.engine()
        let key = engine.configuration.key(url)
        let path: String
        do {
            let first = try #require(engine.sessionlessFile(key: key))
            let again = try #require(engine.sessionlessFile(key: key))
            #expect(again.file === first.file, "the second range opened the file again")
            path = first.file.path
        }
        let isOpen = { () -> Bool in
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return descriptors.contains {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == path
            }
        }
        #expect(isOpen())
        // Unused for over a second: closed, so eviction may take it.
        try await Task.sleep(for: .milliseconds(2_500))
        #expect(!isOpen(), "still open 2.5 s after its last use")
        #expect(engine.sessionlessFile(key: key) != nil)
        #expect(isOpen())
        // Removed behind it (another process evicted it): not served from the old file.
        unlink(path)
        #expect(engine.sessionlessFile(key: key) == nil)
        await engine.shutdown()
        await fixture.tearDown()
    }
}

extension ServableFile {
    /// The resource id its file is named by.
    fileprivate func fileID(in directory: CacheDirectory) -> Int64 {
        Int64((file.path as NSString).lastPathComponent) ?? -1
    }
}
