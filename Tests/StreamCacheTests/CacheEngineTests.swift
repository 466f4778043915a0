import Foundation
import StreamCache
import StreamCacheHTTP
import StreamCacheTesting
import Testing

@Suite(.timeLimit(.minutes(3))) struct CacheEngineTests {
    @Test func overlappingReadsFetchEachByteOnceAcrossRestarts() async throws {
        let fixture = try await EngineFixture.make()
        let data = TestData.bytes(count: 3_000_000, seed: 10)
        fixture.origin.setResource(data, at: "/ep.mp3")
        let url = fixture.origin.url("/ep.mp3")
        let reads: [(Int, Int)] = [
            (1_000_000, 500_000), (900_000, 800_000), (0, 50_000), (2_999_000, 5_000), (40_000, 2_000_000),
        ]
        for (offset, length) in reads {
            // A new engine each time: a new process's view of the same cache directory.
            let engine = try fixture.engine()
            let bytes = try await readAll(engine, url, offset: Int64(offset), length: Int64(length))
            #expect(bytes == slice(data, offset, length))
            await engine.shutdown()
        }
        let engine = try fixture.engine()
        #expect(try await readAll(engine, url) == data)
        await engine.shutdown()
        let stats = fixture.origin.statistics
        #expect(stats.duplicateBytes == 0)
        #expect(stats.bodyBytes == Int64(data.count))
        await fixture.tearDown()
    }

    @Test func thirtyTwoConcurrentReadersShareOneDownload() async throws {
        let fixture = try await EngineFixture.make(conditions: OriginConditions(bytesPerSecond: 400 << 20))
        let size = 64 << 20
        let data = TestData.bytes(count: size, seed: 11)
        fixture.origin.setResource(data, at: "/video.mp4")
        let url = fixture.origin.url("/video.mp4")
        let engine = try fixture.engine()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for reader in 0..<32 {
                group.addTask {
                    // Players at eight different points of the file, four at each, reading to the end.
                    let offset = (reader % 8) * (size / 8) + (reader / 8) * 4096
                    var position = offset
                    for try await chunk in try await engine.read(url, offset: Int64(offset)) {
                        guard position + chunk.count <= size,
                            TestData.mismatch(chunk, data[position..<position + chunk.count]) == nil
                        else {
                            Issue.record("reader \(reader) got wrong bytes at \(position)")
                            return
                        }
                        position += chunk.count
                    }
                    #expect(position == size)
                }
            }
            try await group.waitForAll()
        }
        await engine.shutdown()
        let stats = fixture.origin.statistics
        // The constant: what a connection has in flight (socket buffers on both ends, up to a few
        // MiB on a busy loopback) when its fetch stops at bytes another fetch already brings,
        // once per starting point, not growing with the file.
        #expect(
            stats.bodyBytes <= Int64(size) + 8 * (2 << 20),
            "origin sent \(stats.bodyBytes) bytes for a \(size)-byte file"
        )
        await fixture.tearDown()
    }

    @Test func aCancelledReaderStopsItsFetch() async throws {
        let fixture = try await EngineFixture.make(conditions: OriginConditions(bytesPerSecond: 8 << 20))
        fixture.origin.setResource(TestData.bytes(count: 256 << 20, seed: 12), at: "/long.mp3")
        let engine = try fixture.engine()
        let stream = try await engine.read(fixture.origin.url("/long.mp3"))
        var received = 0
        for try await chunk in stream {
            received += chunk.count
            if received >= 1 << 20 { break }
        }
        try await Task.sleep(for: .milliseconds(700))
        await engine.shutdown()
        let sent = fixture.origin.statistics.bodyBytes
        #expect(sent < 16 << 20, "origin sent \(sent) bytes after the reader left")
        await fixture.tearDown()
    }

    @Test func cancellingOneReaderKeepsTheFetchAnotherNeeds() async throws {
        let fixture = try await EngineFixture.make(conditions: OriginConditions(bytesPerSecond: 16 << 20))
        let data = TestData.bytes(count: 8 << 20, seed: 13)
        fixture.origin.setResource(data, at: "/shared.mp3")
        let url = fixture.origin.url("/shared.mp3")
        let engine = try fixture.engine()
        // Both readers are in before one leaves: the stayer has its first bytes when the quitter starts.
        let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
        let stayer = Task {
            var bytes: [UInt8] = []
            for try await chunk in try await engine.read(url) {
                if bytes.isEmpty { startedContinuation.yield() }
                bytes += chunk
            }
            return bytes
        }
        for await _ in started { break }
        let quitter = Task {
            var count = 0
            for try await chunk in try await engine.read(url) {
                count += chunk.count
                if count > 512 << 10 { break }
            }
        }
        try await quitter.value
        #expect(try await stayer.value == data)
        await engine.shutdown()
        #expect(fixture.origin.statistics.duplicateBytes == 0)
        await fixture.tearDown()
    }

    @Test(arguments: [false, true])
    func aChangedResourceIsReplacedNotMixed(sameLength: Bool) async throws {
        let fixture = try await EngineFixture.make()
        let old = TestData.bytes(count: 1_000_000, seed: 14)
        let new = TestData.bytes(count: sameLength ? 1_000_000 : 1_234_567, seed: 15)
        fixture.origin.setResource(old, at: "/ep.mp3")
        let url = fixture.origin.url("/ep.mp3")
        var engine = try fixture.engine()
        #expect(try await readAll(engine, url, offset: 0, length: 600_000) == slice(old, 0, 600_000))
        await engine.shutdown()
        fixture.origin.setResource(new, at: "/ep.mp3")
        // A new process that checks with the origin (the copy would otherwise be fresh for a
        // while: a tenth of its age since Last-Modified).
        engine = try fixture.engine { $0.revalidationInterval = .zero }
        // Cached part and missing part: both must come from the new version.
        #expect(try await readAll(engine, url, offset: 500_000, length: 300_000) == slice(new, 500_000, 300_000))
        #expect(try await readAll(engine, url) == new)
        await engine.shutdown()
        let resources = try await engine.resources()
        #expect(resources.count == 1)
        #expect(resources.first?.0.info.length == Int64(new.count))
        await fixture.tearDown()
    }

    /// `rm` while a player reads: the read goes on to its end with the origin's bytes (nothing
    /// more is recorded), and a later read fetches the resource afresh.
    @Test func aResourceRemovedWhileItIsReadIsReadToTheEnd() async throws {
        let fixture = try await EngineFixture.make(conditions: OriginConditions(bytesPerSecond: 4_000_000))
        // Requests of 1, 2, 4 and 8 MiB: the last ones are claimed after the removal.
        let data = TestData.bytes(count: 16_000_000, seed: 19)
        fixture.origin.setResource(data, at: "/gone.mp3")
        let url = fixture.origin.url("/gone.mp3")
        let engine = try fixture.engine()
        async let read = readAll(engine, url)
        // Removed once some of it is recorded, in the middle of the read.
        for _ in 0..<200 where await engine.cachedRanges(url) == nil { try await Task.sleep(for: .milliseconds(25)) }
        #expect(try await engine.remove(url))
        #expect(try await read == data, "the read did not finish with the origin's bytes")
        #expect(try await readAll(engine, url, offset: 1_000_000, length: 1000) == slice(data, 1_000_000, 1000))
        await engine.shutdown()
        await fixture.tearDown()
    }

    @Test func aReadPastTheEndEndsCleanly() async throws {
        let fixture = try await EngineFixture.make()
        fixture.origin.setResource(TestData.bytes(count: 1000, seed: 16), at: "/small.bin")
        let engine = try fixture.engine()
        let url = fixture.origin.url("/small.bin")
        #expect(try await readAll(engine, url, offset: 900, length: 500).count == 100)
        #expect(try await readAll(engine, url, offset: 5000, length: 10).isEmpty)
        #expect(try await readAll(engine, url, offset: 1000).isEmpty)
        await engine.shutdown()
        await fixture.tearDown()
    }

    @Test func evictsLeastRecentlyUsedAndStreamsWhatIsLargerThanTheBudget() async throws {
        let fixture = try await EngineFixture.make()
        let small = TestData.bytes(count: 400_000, seed: 17)
        let huge = TestData.bytes(count: 3_000_000, seed: 18)
        for name in ["a", "b", "c"] { fixture.origin.setResource(small, at: "/\(name).mp3") }
        fixture.origin.setResource(huge, at: "/huge.mp4")
        let engine = try fixture.engine { $0.maxSize = 1_000_000 }
        for name in ["a", "b", "c"] {
            #expect(try await readAll(engine, fixture.origin.url("/\(name).mp3")) == small)
            try await Task.sleep(for: .milliseconds(20))
        }
        await engine.shutdown()
        var urls = Set(try await engine.resources().filter { $0.1.count > 0 }.map(\.0.url))
        #expect(!urls.contains(fixture.origin.url("/a.mp3").absoluteString), "the least recently used went first")
        #expect(urls.contains(fixture.origin.url("/c.mp3").absoluteString))
        #expect(try await engine.index.totalCachedBytes() <= 1_000_000)

        #expect(try await readAll(engine, fixture.origin.url("/huge.mp4")) == huge)
        await engine.shutdown()
        urls = Set(try await engine.resources().filter { $0.1.count > 0 }.map(\.0.url))
        #expect(try await engine.index.totalCachedBytes() <= 1_000_000)
        await fixture.tearDown()
    }

    @Test func refusesWhatIsNotHTTP() async throws {
        let fixture = try await EngineFixture.make()
        let engine = try fixture.engine()
        for text in ["file:///etc/passwd", "ftp://example.com/a.mp3", "http:///nohost"] {
            do {
                _ = try await engine.read(URL(string: text)!)
                Issue.record("\(text) accepted")
            } catch let error as StreamCacheError {
                #expect(error.kind == .unsupportedScheme || error.kind == .invalidURL)
            }
        }
        await fixture.tearDown()
    }
}
