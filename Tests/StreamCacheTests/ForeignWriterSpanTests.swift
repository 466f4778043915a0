import Foundation
import StreamCacheTesting
import Testing

@testable import StreamCache

/// A reader of one engine reading bytes another engine (another process) has recorded while its
/// fetch still writes the same data file: the bytes come as memory, never as a span of the file,
/// whose sending a server watches and would end at that fetch's next write (the player's answer
/// cut short, as a player streaming through `serve` while two downloads of the same asset ran
/// saw on a loaded machine). Once no fetch writes the file, spans come again.
@Suite struct ForeignWriterSpanTests {
    @Test func bytesOfAFileAnotherEngineStillWritesComeAsMemory() async throws {
        let fixture = try await EngineFixture.make(conditions: OriginConditions(bytesPerSecond: 1 << 20))
        let data = TestData.bytes(count: 6 << 20, seed: 41)
        fixture.origin.setResource(data, at: "/shared.ts")
        let url = fixture.origin.url("/shared.ts")
        let fetching = try fixture.engine()
        let reading = try fixture.engine()

        // The fetching engine reads the whole resource at 1 MiB/s: about six seconds of claim.
        let whole = Task { try await readAll(fetching, url) }
        // Its first recorded bytes.
        var prefix: [UInt8] = []
        for _ in 0..<100 where prefix.isEmpty {
            try await Task.sleep(for: .milliseconds(100))
            let record = try await reading.index.resource(forKey: reading.configuration.cacheKey(url))
            if let record, let ranges = try? await reading.index.ranges(of: record.id), !ranges.isEmpty { prefix = [0] }
        }
        #expect(!prefix.isEmpty, "the fetching engine recorded nothing")

        var stream = try await reading.open(url).read(from: 0, length: 64 << 10)
        stream.prefersFileSpans = true
        var iterator = stream.makeAsyncIterator()
        let chunk = try #require(try await iterator.nextChunk())
        #expect(chunk.file == nil, "a span of a file another engine is writing")
        #expect(chunk.memory.map(Array.init) == Array(data[0..<chunk.count]), "other bytes than the origin's")

        #expect(try await whole.value == data)
        await fetching.shutdown()
        await reading.shutdown()
        // No fetch writes the file now: a reader that opens it is handed spans of it again.
        let later = try fixture.engine()
        var after = try await later.open(url).read(from: 0, length: 64 << 10)
        after.prefersFileSpans = true
        var next = after.makeAsyncIterator()
        let span = try #require(try await next.nextChunk())
        #expect(span.file != nil)
        await later.shutdown()
        await fixture.tearDown()
    }
}
