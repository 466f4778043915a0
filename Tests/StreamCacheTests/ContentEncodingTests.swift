import Foundation
import StreamCache
import StreamCacheTesting
import Testing

/// An origin that codes its bodies (gzip) despite `Accept-Encoding: identity`: a reader that
/// needs the content refuses them, cached or not; a proxy's engine
/// (``CacheConfiguration/keepsEncodedContent``) keeps them as they came, with their field.
@Suite(.timeLimit(.minutes(2))) struct ContentEncodingTests {
    @Test func anEncodedBodyIsRefusedAndNothingOfItIsCached() async throws {
        let fixture = try await EngineFixture.make(conditions: OriginConditions(faults: [.gzipEncoding]))
        fixture.origin.setResource(TestData.bytes(count: 50_000, seed: 600), at: "/ep.mp3")
        let url = fixture.origin.url("/ep.mp3")
        let engine = try fixture.engine { $0.maxAttempts = 1 }
        do {
            _ = try await readAll(engine, url, offset: 100, length: 1000)
            Issue.record("an encoded body was read as the resource")
        } catch let error as StreamCacheError {
            #expect(error.message.contains("Content-Encoding"), "\(error)")
            #expect(!error.isTransient, "a retry cannot make the origin stop encoding")
        }
        await engine.shutdown()
        let sent = fixture.origin.statistics.requests.flatMap(\.headers)
        #expect(sent.contains("Accept-Encoding: identity"))
        let cached = try await engine.resources().reduce(Int64(0)) { $0 + $1.1.count }
        #expect(cached == 0, "encoded bytes were cached")
        await fixture.tearDown()
    }

    @Test func aProxysCopyOfCodedContentIsReadByNoOtherReader() async throws {
        let fixture = try await EngineFixture.make(conditions: OriginConditions(faults: [.gzipEncoding]))
        let coded = TestData.bytes(count: 50_000, seed: 601)
        fixture.origin.setResource(coded, at: "/notes.txt")
        let url = fixture.origin.url("/notes.txt")
        let proxy = try fixture.engine { $0.keepsEncodedContent = true }
        #expect(try await readAll(proxy, url, offset: 100, length: 1000) == slice(coded, 100, 1000))
        // Recorded in the index by the time the engine has shut down (it is not waited for).
        await proxy.shutdown()

        let reader = try fixture.engine { $0.maxAttempts = 1 }
        let record = try #require(try await reader.resources().first?.0)
        #expect(record.info.contentCoding == "gzip", "the coding was not kept with the bytes")
        await #expect(throws: StreamCacheError.self, "a cached coded copy was read as the content") {
            _ = try await readAll(reader, url, offset: 100, length: 1000)
        }
        await reader.shutdown()
        await fixture.tearDown()
    }
}
