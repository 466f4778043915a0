import Foundation
import StreamCache
import StreamCacheTesting
import Testing

/// An origin that encodes its bodies (gzip) despite `Accept-Encoding: identity` would have its
/// encoded bytes stored at resource offsets and served as the file.
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
}
