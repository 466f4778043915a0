import Foundation
import StreamCache
import StreamCacheTesting
import Testing

/// Readers that start while a slow first fetch is still on its way: every byte they get, and
/// every byte the cache keeps, is the origin's byte at that offset.
@Suite(.timeLimit(.minutes(3))) struct StaggeredReadersTests {
    /// The reproduction of the shifted-bytes bug: a second reader 300,000 bytes into the range a
    /// slow fetch is bringing, started half a second later.
    @Test func aSecondReaderInsideASlowFetchGetsTheOriginsBytes() async throws {
        let fixture = try await EngineFixture.make(
            conditions: OriginConditions(bytesPerSecond: 1 << 20, latency: .milliseconds(1000))
        )
        let data = TestData.bytes(count: 3_000_000, seed: 110)
        fixture.origin.setResource(data, at: "/r.bin")
        let url = fixture.origin.url("/r.bin")
        let engine = try fixture.engine()
        async let first = readAll(engine, url, offset: 0, length: 1_048_576)
        try await Task.sleep(for: .milliseconds(500))
        let second = try await readAll(engine, url, offset: 300_000, length: 748_576)
        #expect(
            TestData.mismatch(try await first, slice(data, 0, 1_048_576)) == nil,
            "the first reader got wrong bytes"
        )
        #expect(TestData.mismatch(second, slice(data, 300_000, 748_576)) == nil, "the second reader got wrong bytes")
        await engine.shutdown()

        fixture.origin.setConditions(OriginConditions())
        let replay = try fixture.engine()
        #expect(
            TestData.mismatch(try await readAll(replay, url, offset: 0, length: 1_048_576), slice(data, 0, 1_048_576))
                == nil
        )
        #expect(TestData.mismatch(try await readAll(replay, url), data) == nil, "the cache kept a wrong byte")
        await replay.shutdown()
        await fixture.tearDown()
    }
}
