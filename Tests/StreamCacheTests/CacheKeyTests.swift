import Foundation
import StreamCacheTesting
import Testing

@testable import StreamCache

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

    /// A URL keyed as written (the quick way) gets the key the full respelling gives; every
    /// other spelling takes the full way.
    @Test(arguments: [
        "http://127.0.0.1:8080/seg/1.ts", "https://cdn.example.com/a/b.m3u8?token=AbC%2F1&x=",
        "http://example.com", "http://example.com/", "http://example.com:/a", "http://example.com?q",
        "http://a-b.example/%7Euser/ep%20one.mp3", "https://example.com/a#", "https://example.com/a#frag",
        "HTTPS://example.com/a", "https://Example.com/a", "http://[::1]:8080/a", "http://user@example.com/a",
        "http://ex%41mple.com/a", "http://example.com:08080/a", "https://example.com/a/../b",
        "http://127.0.0.1:99999/a",
    ])
    func theQuickKeyIsTheRespelledKey(spelling: String) throws {
        let url = try #require(URL(string: spelling))
        #expect(CacheConfiguration.canonicalKey(url) == CacheConfiguration.respelledKey(url))
    }

    @Test func onlyCanonicalSpellingsTakeTheQuickWay() {
        #expect(CacheConfiguration.isCanonical("http://127.0.0.1:8080/seg/1.ts"))
        #expect(CacheConfiguration.isCanonical("https://cdn.example.com/a?B=C"))
        for spelling in [
            "https://Example.com/a", "HTTP://example.com/a", "http://example.com/a#", "http://example.com:/a",
            "http://user@example.com/a", "http://[::1]/a", "http://ex%41mple.com/a", "ftp://example.com/a", "http:///a",
            "http://example.com:080/a",
        ] {
            #expect(!CacheConfiguration.isCanonical(spelling), "\(spelling)")
        }
    }
}
