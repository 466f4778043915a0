import Foundation
import StreamCache
import StreamCacheTesting
import Testing

/// What an origin says of a resource (its length, its validators) reaches the index: for a
/// short body in the transaction that records the body's bytes, and on its own when no bytes
/// of the body are recorded. A new engine reads what the index says, not what a session kept.
@Suite(.timeLimit(.minutes(1))) struct ContentInfoRecordingTests {
    @Test func aShortBodyIsRecordedWithWhatTheOriginSaidOfIt() async throws {
        let fixture = try await EngineFixture.make()
        let data = TestData.bytes(count: 2048, seed: 30)
        fixture.origin.setResource(data, at: "/seg/1.ts")
        let url = fixture.origin.url("/seg/1.ts")
        let engine = try fixture.engine()
        #expect(try await readAll(engine, url) == data)
        await engine.shutdown()

        let later = try fixture.engine()
        let (record, ranges) = try #require(try await later.resources().first { $0.0.url == url.absoluteString })
        #expect(record.info.length == 2048)
        #expect(record.info.etag != nil)
        #expect(ranges == RangeSet([ByteRange(0, 2048)]))
        // Served from the cache alone.
        let requests = fixture.origin.statistics.requests.count
        #expect(try await readAll(later, url) == data)
        #expect(fixture.origin.statistics.requests.count == requests)
        await later.shutdown()
        await fixture.tearDown()
    }

    @Test func whatTheOriginSaidIsRecordedWhenItsBodyBreaksOffAtOnce() async throws {
        let fixture = try await EngineFixture.make(conditions: OriginConditions(faults: [.resetAfter(0)]))
        fixture.origin.setResource(TestData.bytes(count: 100_000, seed: 31), at: "/seg/2.ts")
        let url = fixture.origin.url("/seg/2.ts")
        let engine = try fixture.engine { $0.maxAttempts = 1 }
        await #expect(throws: StreamCacheError.self) { _ = try await readAll(engine, url) }
        await engine.shutdown()

        let later = try fixture.engine()
        let (record, ranges) = try #require(try await later.resources().first { $0.0.url == url.absoluteString })
        #expect(record.info.length == 100_000)
        #expect(ranges.isEmpty)
        await later.shutdown()
        await fixture.tearDown()
    }
}
