import Foundation
import StreamCache
import StreamCacheTesting
import Testing

/// One resource is stored once, however its URL is spelled: a `#fragment` (never sent to the
/// origin) and the case of the scheme and host do not make another entry.
@Suite(.timeLimit(.minutes(2))) struct CacheKeyTests {
    @Test func spellingsOfOneURLShareOneEntry() async throws {
        let fixture = try await EngineFixture.make()
        let data = TestData.bytes(count: 20_000, seed: 700)
        fixture.origin.setResource(data, at: "/ep.mp3")
        let port = fixture.origin.port
        let engine = try fixture.engine()
        for spelling in [
            "http://127.0.0.1:\(port)/ep.mp3", "http://127.0.0.1:\(port)/ep.mp3#t=10",
            "HTTP://127.0.0.1:\(port)/ep.mp3", "http://LOCALHOST:\(port)/ep.mp3",
            "http://localhost:\(port)/ep.mp3#x",
        ] {
            #expect(try await readAll(engine, URL(string: spelling)!) == data, "\(spelling)")
        }
        await engine.shutdown()
        let keys = try await engine.resources().map(\.0.key)
        #expect(Set(keys) == ["http://127.0.0.1:\(port)/ep.mp3", "http://localhost:\(port)/ep.mp3"])
        #expect(fixture.origin.statistics.bodyBytes == 2 * Int64(data.count), "one download per entry")
        await fixture.tearDown()
    }

    @Test func theKeyKeepsPathAndQueryAsTheyAre() {
        let key = CacheConfiguration().key
        #expect(key(URL(string: "https://Example.COM/A/b.mp3?T=1#f")!) == "https://example.com/A/b.mp3?T=1")
        #expect(key(URL(string: "https://example.com:8443/a")!) == "https://example.com:8443/a")
    }
}
