import Foundation
import StreamCache
import StreamCacheTesting
import Testing

/// The engine follows redirects itself: each target is checked like the first URL, and each hop
/// gets only the headers meant for it.
@Suite(.timeLimit(.minutes(2))) struct RedirectTests {
    @Test func followsAChainAndCachesUnderTheOriginalURL() async throws {
        let fixture = try await EngineFixture.make()
        let data = TestData.bytes(count: 100_000, seed: 400)
        fixture.origin.setResource(data, at: "/real.mp3")
        fixture.origin.setRedirect("/short", to: "/hop")
        fixture.origin.setRedirect("/hop", to: fixture.origin.url("/real.mp3").absoluteString, status: 307)
        let engine = try fixture.engine()
        let url = fixture.origin.url("/short")
        #expect(TestData.mismatch(try await readAll(engine, url), data) == nil)
        let before = fixture.origin.statistics.requests.count
        #expect(TestData.mismatch(try await readAll(engine, url, offset: 10, length: 100), data[10..<110]) == nil)
        #expect(fixture.origin.statistics.requests.count == before, "a cached read follows no redirect")
        await engine.shutdown()
        await fixture.tearDown()
    }

    @Test func aRedirectLoopEndsInOneClearError() async throws {
        let fixture = try await EngineFixture.make()
        for hop in 0..<12 { fixture.origin.setRedirect("/loop\(hop)", to: "/loop\(hop + 1)") }
        fixture.origin.setRedirect("/self", to: "/self")
        let engine = try fixture.engine()
        for path in ["/loop0", "/self"] {
            await #expect(throws: StreamCacheError.self) {
                _ = try await readAll(engine, fixture.origin.url(path), length: 10)
            }
        }
        // 11 requests per attempt at most (the first and 10 redirects), however the read retries.
        #expect(fixture.origin.statistics.requests.count <= 2 * 3 * 11)
        await engine.shutdown()
        await fixture.tearDown()
    }

    /// A port above 65535 crashed the process inside the HTTP client; a redirect to another
    /// scheme would read local files. Both are refused before anything is sent.
    @Test(arguments: ["http://127.0.0.1:70000/x", "http://127.0.0.1:99999/x", "file:///etc/passwd", "ftp://h/x"])
    func aRedirectToAURLTheEngineDoesNotFetchIsRefused(target: String) async throws {
        let fixture = try await EngineFixture.make()
        fixture.origin.setRedirect("/bad", to: target)
        let engine = try fixture.engine()
        do {
            _ = try await readAll(engine, fixture.origin.url("/bad"), length: 10)
            Issue.record("a redirect to \(target) was followed")
        } catch let error as StreamCacheError {
            #expect(error.kind == .refusedURL, "\(error)")
            #expect(!error.message.contains("\n"))
        }
        await engine.shutdown()
        await fixture.tearDown()
    }

    @Test(arguments: ["http://127.0.0.1:70000/x", "http://127.0.0.1:0/x", "http://[::1]:65536/x"])
    func aURLWithABadPortIsRefusedAtOnce(url: String) async throws {
        let fixture = try await EngineFixture.make()
        let engine = try fixture.engine()
        await #expect(throws: StreamCacheError.self) { _ = try await engine.open(URL(string: url)!) }
        await engine.shutdown()
        await fixture.tearDown()
    }

    /// The port as written decides, on the URL's bytes: in range, any form of authority.
    @Test func portsAreJudgedAsWritten() throws {
        let accepted = [
            "http://127.0.0.1:8080/x", "http://[::1]:8080/x", "http://[::1]/x", "https://example.com:1/x?a=1:2",
            "http://example.com:65535/x#f:9", "http://example.com/x:99999", "http://example.com:/x",
        ]
        for url in accepted { #expect(throws: Never.self, "\(url)") { try CacheEngine.validate(URL(string: url)!) } }
        let refused = [
            "http://127.0.0.1:0/x", "http://127.0.0.1:65536/x", "http://[::1]:65536/x", "http://h:080808/x",
            "http://127.0.0.1:18446744073709551617/x", "http://h:-1/x",
        ]
        for url in refused {
            guard let parsed = URL(string: url) else { continue }
            #expect(throws: StreamCacheError.self, "\(url)") { try CacheEngine.validate(parsed) }
        }
    }

    /// A header given for one host went to another host after a redirect.
    @Test func headersGoOnlyToTheOriginsTheyAreFor() async throws {
        let first = try await EngineFixture.make()
        let second = try await TestOrigin(host: "127.0.0.2")
        let data = TestData.bytes(count: 10_000, seed: 401)
        second.setResource(data, at: "/ep.mp3")
        first.origin.setRedirect("/ep.mp3", to: "http://127.0.0.2:\(second.port)/ep.mp3")
        let headers = OriginHeaders([
            OriginHeaders.Rule(parsing: "X-Everywhere: for the first origin")!,
            OriginHeaders.Rule(parsing: "127.0.0.1=X-Secret: S")!,
            OriginHeaders.Rule(parsing: "127.0.0.2=X-Second: T")!,
        ])
        let engine = try first.engine()
        var bytes: [UInt8] = []
        for try await chunk in try await engine.open(first.origin.url("/ep.mp3"), originHeaders: headers).read() {
            bytes += chunk
        }
        #expect(bytes == data)
        let firstHeaders = Set(first.origin.statistics.requests.flatMap(\.headers))
        let secondHeaders = Set(second.statistics.requests.flatMap(\.headers))
        #expect(firstHeaders.isSuperset(of: ["X-Everywhere: for the first origin", "X-Secret: S"]))
        #expect(!firstHeaders.contains("X-Second: T"))
        #expect(secondHeaders.contains("X-Second: T"))
        #expect(!secondHeaders.contains("X-Secret: S") && !secondHeaders.contains("X-Everywhere: for the first origin"))
        await engine.shutdown()
        await second.shutdown()
        await first.tearDown()
    }
}
