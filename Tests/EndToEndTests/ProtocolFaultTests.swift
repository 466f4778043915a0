import Foundation
import StreamCacheTesting
import Testing

/// Origins and requests that break HTTP's rules (a 304 to a range, an expanding playlist, an
/// overflowing port, ambiguous framing, unknown transfer codings, files cut short, tags that
/// change on every answer): each ends in a clear answer or a whole read, against the built binary.
@Suite(.timeLimit(.minutes(3))) struct ProtocolFaultTests {
    /// An origin that answers 304 to a range request with If-Range: asked once more without it,
    /// the read completes; one that answers every range request so: a few requests and one
    /// clear failure. Never a request loop.
    @Test func a304ToARangeRequestEndsInAFewRequests() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await ScriptedOrigin(
            [
                "/loop": [
                    "status": 200, "size": 200_000, "notModifiedToIfRange": true,
                    "headers": [["ETag", "\"l1\""], ["Cache-Control", "max-age=3600"]],
                ],
                "/always": [
                    "status": 200, "size": 200_000, "notModifiedToRange": true,
                    "headers": [["ETag", "\"l2\""], ["Cache-Control", "max-age=3600"]],
                ],
            ],
            in: workspace
        )
        let first = try await CLI.run(
            ["get", origin.url("loop"), "--range", "0-999", "-o", workspace.output("a")],
            cacheDir: workspace.cacheDirectory
        )
        #expect(first.status == 0, "\(first.stderr)")
        let before = try await origin.requests("loop").count
        let second = try await CLI.run(
            ["get", origin.url("loop"), "-o", workspace.output("b")],
            cacheDir: workspace.cacheDirectory,
            timeout: .seconds(30)
        )
        let requests = try await origin.requests("loop").count - before
        #expect(second.status == 0, "\(second.stderr)")
        let whole = workspace.read(workspace.output("b")) == ScriptedOrigin.body(size: 200_000)
        #expect(whole, "wrong bytes")
        #expect(requests <= 3, "the origin was asked \(requests) times")

        let failed = try await CLI.run(
            ["get", origin.url("always"), "--range", "0-999", "-o", workspace.output("c")],
            cacheDir: workspace.cacheDirectory,
            timeout: .seconds(30)
        )
        let asked = try await origin.requests("always").count
        #expect(failed.status != 0 && !failed.stderr.contains("killed after"), "\(failed.stderr)")
        #expect(failed.stderr.contains("304") && failed.stderr.split(separator: "\n").count == 1, "\(failed.stderr)")
        #expect(asked <= 6, "the origin was asked \(asked) times")
        #expect(!FileManager.default.fileExists(atPath: workspace.output("c")), "a partial output was left")
    }

    /// A 1.6 KB playlist whose variables each double the last would expand to gigabytes: it is
    /// refused with one line (`hls inspect`) or a 502 (`serve`), the process unharmed.
    @Test func aPlaylistThatExpandsWithoutBoundIsRefused() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        var text = "#EXTM3U\n#EXT-X-VERSION:8\n#EXT-X-TARGETDURATION:2\n"
        text += "#EXT-X-DEFINE:NAME=\"v0\",VALUE=\"\(String(repeating: "x", count: 1000))\"\n"
        for level in 1...32 { text += "#EXT-X-DEFINE:NAME=\"v\(level)\",VALUE=\"{$v\(level - 1)}{$v\(level - 1)}\"\n" }
        text += "#EXTINF:2.0,\n{$v32}.ts\n#EXT-X-ENDLIST\n"
        try workspace.write(Array(text.utf8), as: "bomb.m3u8")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let inspected = try await CLI.run(
            ["hls", "inspect", origin.url("bomb.m3u8")],
            cacheDir: workspace.cacheDirectory
        )
        #expect(inspected.status != 0, "\(inspected.stderr)")
        #expect(inspected.stderr.split(separator: "\n").count == 1, "\(inspected.stderr)")
        #expect(inspected.stderr.contains("expand"), "\(inspected.stderr)")
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let reply = try await Curl.fetch(proxy.url(origin.url("bomb.m3u8")))
        #expect(reply.status == 502, "\(reply.status)")
        #expect(try await Curl.fetch(proxy.url(origin.url("bomb.m3u8"))).status == 502, "the proxy went away")
        try await proxy.stop()
        try await origin.stop()
    }

    /// A port that overflows (2^64 + 1 is 1 modulo 2^64) is refused, not read as another port.
    @Test func anOverflowingPortIsRefused() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let result = try await CLI.run(
            ["get", "http://127.0.0.1:18446744073709551617/x", "-o", workspace.output("x")],
            cacheDir: workspace.cacheDirectory,
            timeout: .seconds(30)
        )
        #expect(result.status != 0)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("port"), "\(result.stderr)")
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let reply = try await Curl.fetch(proxy.url("http://127.0.0.1:18446744073709551617/x"))
        #expect(reply.status == 400, "\(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
        try await proxy.stop()
    }

    /// Requests whose framing, addressing or provenance is ambiguous: each refused, at once.
    @Test func ambiguousRequestsAreRefused() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        try workspace.write(TestData.bytes(count: 10_000, seed: 25), as: "a.bin")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let host = "Host: 127.0.0.1:\(proxy.port)\r\n"
        let target = "/" + origin.url("a.bin")
        let cases: [(String, String, Int)] = [
            ("two Host headers", "GET \(target) HTTP/1.1\r\n\(host)\(host)", 400),
            ("absolute-form naming another server", "GET http://evil.example\(target) HTTP/1.1\r\n\(host)", 400),
            ("Transfer-Encoding: xchunked", "GET \(target) HTTP/1.1\r\n\(host)Transfer-Encoding: xchunked\r\n", 400),
            (
                "doubled Sec-Fetch-Site",
                "GET \(target) HTTP/1.1\r\n\(host)Sec-Fetch-Site: none\r\nSec-Fetch-Site: cross-site\r\n",
                403
            ),
            ("padded Sec-Fetch-Site", "GET \(target) HTTP/1.1\r\n\(host)Sec-Fetch-Site: \t Cross-Site \r\n", 403),
            (
                "only a web page's Referer", "GET \(target) HTTP/1.1\r\n\(host)Referer: https://evil.example/page\r\n",
                403
            ),
            ("a forged verdict", "GET \(target) HTTP/1.1\r\n\(host)StreamCache-Refusal: none\r\n", 200),
            ("absolute-form naming the proxy", "GET http://127.0.0.1:\(proxy.port)\(target) HTTP/1.1\r\n\(host)", 200),
        ]
        for (name, head, status) in cases {
            let reply = try await RawSocket.converse(head + "Connection: close\r\n\r\n", port: proxy.port, seconds: 5)
            #expect(reply.reply.hasPrefix("HTTP/1.1 \(status)"), "\(name): \(reply.reply.prefix(120))")
            #expect(reply.closed, "\(name): the connection was left open")
        }
        // Without asking to close, a refused request's connection is closed all the same.
        let kept = try await RawSocket.converse(
            "GET \(target) HTTP/1.1\r\n\(host)\(host)\r\n",
            port: proxy.port,
            seconds: 5
        )
        #expect(kept.closed && kept.reply.hasPrefix("HTTP/1.1 400"), "\(kept.reply.prefix(120))")
        try await proxy.stop()
        try await origin.stop()
    }

    /// A transfer coding other than chunked (`gzip, chunked`): its bytes are not the content,
    /// none is kept or served as the content.
    @Test func aTransferCodingOtherThanChunkedIsRefused() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await ScriptedOrigin(
            ["/coded": ["status": 200, "size": 300_000, "transferCoding": "gzip, chunked"]],
            in: workspace
        )
        let got = try await CLI.run(
            ["get", origin.url("coded"), "-o", workspace.output("a")],
            cacheDir: workspace.cacheDirectory
        )
        #expect(got.status != 0)
        #expect(got.stderr.contains("Transfer-Encoding: gzip, chunked"), "\(got.stderr)")
        #expect(!FileManager.default.fileExists(atPath: workspace.output("a")))
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let reply = try await Curl.fetch(proxy.url(origin.url("coded")))
        #expect(reply.status == 502, "\(reply.status)")
        #expect(reply.body.count < 1000, "\(reply.body.count) bytes were served as the content")
        try await proxy.stop()
        let listed = try await CLI.run(["ls", "--json"], cacheDir: workspace.cacheDirectory)
        let totals = (try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [String: Any])?["totals"]
        #expect((totals as? [String: Any])?["cachedBytes"] as? Int == 0, "\(listed.output)")
    }

    /// A fresh resource replaced at the origin by a shorter one, then read beyond its new end:
    /// the `416` ends the version from inside the fetch that met it. That request gets the 416;
    /// every later one is served from the new version (it got 500 until a restart).
    @Test func aFailureInsideASessionEndsWithTheRequestThatMetIt() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let fresh = [["Cache-Control", "max-age=3600"]]
        let origin = try await ScriptedOrigin(
            ["/short": ["status": 200, "size": 2_000_000, "headers": fresh]],
            in: workspace
        )
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let url = proxy.url(origin.url("short"))
        #expect(try await Curl.fetch(url, headers: ["Range: bytes=0-999"]).status == 206)
        try origin.rescript(["/short": ["status": 200, "size": 100_000, "headers": fresh]])
        let beyond = try await Curl.fetch(url, headers: ["Range: bytes=1500000-1500999"])
        #expect(beyond.status == 416, "\(beyond.status) \(String(decoding: beyond.body, as: UTF8.self))")
        for _ in 0..<3 {
            let later = try await Curl.fetch(url, headers: ["Range: bytes=99000-99999"])
            #expect(later.status == 206, "\(later.status) \(String(decoding: later.body, as: UTF8.self))")
            let right = Array(later.body) == Array(ScriptedOrigin.body(size: 100_000)[99_000...])
            #expect(right, "wrong bytes")
        }
        try await proxy.stop()
    }

    /// `curl -I` of an endless chunked body: the read that learns its length stops when curl
    /// leaves, and the cache never holds more of it than its budget.
    @Test func aHeadOfAnEndlessBodyStopsWithItsClientAndWithinTheBudget() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await ScriptedOrigin(["/endless": ["status": 200, "endless": true]], in: workspace)
        let proxy = try await ListeningProcess(["serve", "--max-size", "20M"], cacheDir: workspace.cacheDirectory)
        let head = try await Tool.run("curl", ["-s", "-I", "--max-time", "2", proxy.url(origin.url("endless"))])
        #expect(head.status == 28, "curl gave up waiting: \(head.status)")
        try await Task.sleep(for: .milliseconds(500))
        let before = try await origin.endlessBytes()
        try await Task.sleep(for: .seconds(2))
        let after = try await origin.endlessBytes()
        #expect(after == before, "the origin read went on after the client left: \(before) then \(after) bytes")
        let stored = workspace.sizeOnDisk(of: workspace.cacheDirectory + "/data")
        #expect(stored <= 20 << 20, "\(stored) bytes kept against a 20 MiB budget")
        try await proxy.stop()
    }

    /// A data file cut short behind the cache's back while `serve` has it warm: the ranges past
    /// its end are fetched again, not sent as nothing (a 206 with no bytes, at full CPU).
    @Test func aDataFileCutShortIsFetchedAgain() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 20_000_000, seed: 256)
        try workspace.write(data, as: "f.bin")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let url = proxy.url(origin.url("f.bin"))
        #expect(try await Curl.fetch(url).body.count == data.count)
        let file = try #require(workspace.dataFiles().first)
        #expect(truncate(file, 10_000_000) == 0)
        for (first, last) in [(15_000_000, 15_999_999), (12_000_000, 12_009_999), (0, 19_999_999)] {
            let reply = try await Tool.run(
                "curl",
                ["-s", "--max-time", "20", "-r", "\(first)-\(last)", "-o", workspace.output("r"), url]
            )
            #expect(reply.status == 0, "\(first)-\(last): curl exited \(reply.status)")
            let right = workspace.read(workspace.output("r")) == Array(data[first...last])
            #expect(right, "\(first)-\(last): wrong bytes")
        }
        try await proxy.stop()
    }

    /// An origin whose ETag changes on every response, nothing else: a read goes on uncached
    /// where the tag changed under it, to the last byte, instead of being cut at 1 MiB.
    @Test func anOriginThatTagsEveryResponseAnewIsReadToTheEnd() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 20_000_000, seed: 259)
        try workspace.write(data, as: "f.bin")
        let origin = try await OriginProcess(
            directory: workspace.originDirectory,
            arguments: ["--fault", "changing-etag"]
        )
        for run in 1...2 {
            let got = try await CLI.run(
                ["get", origin.url("f.bin"), "-o", workspace.output("get\(run)")],
                cacheDir: workspace.cacheDirectory
            )
            #expect(got.status == 0, "run \(run): \(got.stderr)")
            // Compared off the cooperative threads: 20 MB compared element by element in a debug
            // build holds one of the two for seconds, and every test beside it waits.
            let output = workspace.output("get\(run)")
            let whole = try await onOwnThread { workspace.read(output) == data }
            #expect(whole, "run \(run): wrong bytes")
        }
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory + "-serve")
        defer { try? FileManager.default.removeItem(atPath: workspace.cacheDirectory + "-serve") }
        let reply = try await Curl.fetch(proxy.url(origin.url("f.bin")))
        #expect(reply.status == 200 && reply.body.count == data.count, "\(reply.status), \(reply.body.count) bytes")
        let body = reply.body
        let served = try await onOwnThread { Array(body) == data }
        #expect(served, "wrong bytes")
        try await proxy.stop()
    }
}
