import Foundation
import StreamCacheTesting
import Testing

/// A web page could use the proxy with blind requests (`<img>`, `fetch` in no-cors mode) that
/// carry the `-H` headers and fill the cache. Browsers mark them; players send no such header.
@Suite(.timeLimit(.minutes(2))) struct WebPageTests {
    @Test func requestsFromWebPagesAreRefusedUnlessAllowed() async throws {
        let setup = try await ProxySetup(proxyArguments: ["--allow-origin", "https://player.example"])
        defer { setup.remove() }
        let data = TestData.bytes(count: 5000, seed: 520)
        try setup.workspace.write(data, as: "a.bin")

        for header in [
            "Origin: https://evil.example", "Origin: null", "Sec-Fetch-Site: cross-site",
            "Sec-Fetch-Site: same-site",
        ] {
            let reply = try await Curl.fetch(setup.url("a.bin"), headers: [header])
            #expect(reply.status == 403, "\(header)")
            #expect(String(decoding: reply.body, as: UTF8.self).contains("web pages"), "\(header)")
        }
        #expect(try await setup.origin.stats().requests.isEmpty, "a refused request reached the origin")

        let allowed = try await Curl.fetch(setup.url("a.bin"), headers: ["Origin: https://player.example"])
        #expect(allowed.status == 200 && [UInt8](allowed.body) == data)
        #expect(allowed.headers["access-control-allow-origin"] == "https://player.example")
        // A media element of the allowed page: no Origin, the page as Referer.
        let element = try await Curl.fetch(
            setup.url("a.bin"),
            headers: ["Sec-Fetch-Site: cross-site", "Referer: https://player.example/watch?v=1"]
        )
        #expect(element.status == 200)
        // What players send: none of these headers, or a navigation the user typed.
        let player = try await Curl.fetch(setup.url("a.bin"), headers: ["Sec-Fetch-Site: none"])
        #expect(player.status == 200 && [UInt8](player.body) == data)
    }

    @Test func anInvalidAllowOriginIsRefusedAtStart() async throws {
        let result = try await CLI.run(["serve", "--allow-origin", "player.example/path"], cacheDir: nil)
        #expect(result.status != 0)
        #expect(result.stderr.contains("--allow-origin"))
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }
}
