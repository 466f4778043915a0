import Foundation
import StreamCacheTesting
import Testing

/// `serve` against origins and URLs that try to break it: every answer is a clear 4xx/5xx and
/// the proxy goes on serving.
@Suite(.timeLimit(.minutes(3))) struct HostileOriginTests {
    /// Ports above 65535 killed the proxy (SIGILL in the HTTP client): directly, through a
    /// redirect, and through a playlist that lists such a segment.
    @Test func portsAbove65535AreRefusedAndTheProxyLives() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 1000, seed: 500)
        try workspace.write(data, as: "a.bin")
        try Data(
            "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nhttp://127.0.0.1:70000/seg.ts\n#EXT-X-ENDLIST\n".utf8
        ).write(to: URL(fileURLWithPath: workspace.originDirectory + "/list.m3u8"))
        let origin = try await OriginProcess(
            directory: workspace.originDirectory,
            arguments: ["--redirect", "/bounce=http://127.0.0.1:70000/x"]
        )
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)

        let direct = try await Curl.fetch(proxy.url("http://127.0.0.1:99999/x"))
        #expect(direct.status == 400)
        #expect(String(decoding: direct.body, as: UTF8.self).contains("99999"))
        let bounced = try await Curl.fetch(proxy.url(origin.url("bounce")))
        #expect(bounced.status == 502)
        #expect(String(decoding: bounced.body, as: UTF8.self).contains("70000"))
        let probe = try await Tool.run(
            "ffprobe",
            ["-v", "error", "-rw_timeout", "5000000", proxy.url(origin.url("list.m3u8"))],
            timeout: .seconds(30)
        )
        #expect(probe.status != 0, "ffprobe played a segment that cannot exist")

        #expect(proxy.process.isRunning, "the proxy died")
        let fine = try await Curl.fetch(proxy.url(origin.url("a.bin")))
        #expect(fine.status == 200 && [UInt8](fine.body) == data)
    }

    /// An origin that redirects to the proxy itself made a request loop with no client.
    @Test func originURLsAndRedirectsThatPointAtTheProxyAreRefused() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let loopTarget = "http://127.0.0.1:\(proxy.port)/http://127.0.0.1:1/self-loop"
        let origin = try await OriginProcess(
            directory: workspace.originDirectory,
            arguments: ["--redirect", "/self-loop=\(loopTarget)"]
        )
        let looped = try await Curl.fetch(proxy.url(origin.url("self-loop")))
        #expect(looped.status == 502)
        #expect(try await origin.stats().requests.count == 1, "the loop went on")
        for name in ["127.0.0.1", "localhost", "[::1]"] {
            let direct = try await Curl.fetch(proxy.url("http://\(name):\(proxy.port)/x"))
            #expect(direct.status == 400, "\(name)")
        }
        #expect(proxy.process.isRunning)
    }
}
