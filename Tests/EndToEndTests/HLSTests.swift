import Foundation
import Testing

/// HLS through `streamcache serve` and `streamcache hls inspect`: streams made by ffmpeg, played
/// by ffmpeg through the proxy, a second time from the cache alone.
@Suite(.timeLimit(.minutes(5))) struct HLSTests {
    /// The streams, as folder name and playlist, made once per test in the origin folder.
    static let streams = [TestStreams.Kind.ts, .fmp4, .single, .aes, .multi].map(\.playlist)

    /// Makes every kind of stream the issue lists with ffmpeg: MPEG-TS segments; fMP4 with
    /// `EXT-X-MAP`; one file of byte-range segments; AES-128; alternate audio and WebVTT subtitles.
    static func makeStreams(in directory: String) async throws {
        for kind in [TestStreams.Kind.ts, .fmp4, .single, .aes, .multi] {
            try await TestStreams.make(kind, in: directory)
        }
    }

    @Test func ffmpegMadeStreamsPlayThroughTheProxyAndASecondPlayIsFree() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        try await Self.makeStreams(in: setup.workspace.originDirectory)
        for stream in Self.streams {
            let play = try await Tool.run(
                "ffmpeg",
                ["-hide_banner", "-v", "error", "-i", setup.url(stream), "-map", "0", "-f", "null", "-"]
            )
            #expect(play.status == 0 && play.stderr.isEmpty, "\(stream): \(play.stderr)")
        }
        let first = try await setup.origin.stats()
        #expect(first.bodyBytes > 300_000, "the streams were not fetched: \(first.bodyBytes) bytes")
        #expect(first.duplicateBytes == 0)
        for stream in Self.streams {
            let play = try await Tool.run(
                "ffmpeg",
                ["-hide_banner", "-v", "error", "-i", setup.url(stream), "-map", "0", "-f", "null", "-"]
            )
            #expect(play.status == 0 && play.stderr.isEmpty, "\(stream), second play: \(play.stderr)")
        }
        // Nothing is fetched again: what is asked for is checked with a conditional request (the
        // files were written a moment ago, so they are stale at once, RFC 9111 §4.2.2), and the
        // replay costs the origin no body byte.
        let again = try await setup.origin.stats().requests.dropFirst(first.requests.count)
        let body = again.reduce(0) { $0 + $1.bodyBytes }
        #expect(body == 0, "a second play cost \(body) body bytes: \(again.map { "\($0.path) \($0.status)" })")
        #expect(again.allSatisfy { $0.status == 304 }, "\(again.map { "\($0.path) \($0.status)" })")
    }

    @Test func playlistsAreRewrittenToTheProxyAndForeignSchemesAreNeverFetched() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        try """
        #EXTM3U
        #EXT-X-TARGETDURATION:2
        #EXT-X-KEY:METHOD=AES-128,URI="file:///etc/passwd"
        #EXTINF:2,
        seg.ts
        #EXTINF:2,
        https://cdn.example/other.ts?a=1
        #EXTINF:2,
        file:///etc/shadow
        #EXT-X-ENDLIST
        """.write(toFile: setup.workspace.originDirectory + "/evil.m3u8", atomically: true, encoding: .utf8)
        let reply = try await Curl.fetch(setup.url("evil.m3u8"))
        #expect(reply.status == 200)
        #expect(reply.headers["content-type"] == "application/vnd.apple.mpegurl")
        let text = String(decoding: reply.body, as: UTF8.self)
        #expect(reply.headers["content-length"] == String(reply.body.count))
        let uris = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(uris == ["/\(setup.origin.url("seg.ts"))", "/https://cdn.example/other.ts?a=1", "/file:///etc/shadow"])
        #expect(text.contains("URI=\"/file:///etc/passwd\""))
        // What a player would fetch next is refused, not read from this machine.
        for uri in ["/file:///etc/passwd", "/file:///etc/shadow"] {
            #expect(try await Curl.fetch(setup.proxy.url(String(uri.dropFirst()))).status == 400)
        }
        // Something that only claims to be a playlist is a clean 502.
        try Data(repeating: 0xFF, count: 4096).write(
            to: URL(fileURLWithPath: setup.workspace.originDirectory + "/bad.m3u8")
        )
        let bad = try await Curl.fetch(setup.url("bad.m3u8"))
        #expect(bad.status == 502)
        #expect(String(decoding: bad.body, as: UTF8.self).contains("not UTF-8"))
        // A plain M3U list (no #EXTM3U) is not HLS: it is passed on as it is.
        let plain = "# a radio station\nhttps://radio.example/live.mp3\nep1.mp3\n"
        try plain.write(toFile: setup.workspace.originDirectory + "/station.m3u", atomically: true, encoding: .utf8)
        let station = try await Curl.fetch(setup.url("station.m3u"))
        #expect(station.status == 200)
        #expect(String(decoding: station.body, as: UTF8.self) == plain)
    }

    @Test func inspectSummarisesPlaylistsAsTextAndJSON() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        try await Self.makeStreams(in: setup.workspace.originDirectory)
        let master = try await CLI.run(
            ["hls", "inspect", setup.origin.url("multi/master.m3u8"), "--json"],
            cacheDir: nil
        )
        #expect(master.status == 0, "\(master.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: master.stdout) as? [String: Any])
        #expect(summary["kind"] as? String == "multivariant")
        let variants = try #require(summary["variants"] as? [[String: Any]])
        #expect(variants.count == 1)
        #expect(variants.first?["audio"] as? String == "group_aud")
        #expect(variants.first?["subtitles"] as? String == "subs")
        #expect(variants.first?["resolution"] as? String == "160x120")
        #expect(variants.first?["averageBandwidth"] is NSNull)
        let renditions = try #require(summary["renditions"] as? [[String: Any]])
        #expect(renditions.map { $0["type"] as? String } == ["AUDIO", "AUDIO", "SUBTITLES"])
        #expect(renditions.map { $0["language"] as? String } == ["en", "de", nil])

        let single = try await CLI.run(
            ["hls", "inspect", setup.workspace.originDirectory + "/single/index.m3u8", "--json"],
            cacheDir: nil
        )
        let media = try #require(try JSONSerialization.jsonObject(with: single.stdout) as? [String: Any])
        let segments = try #require(media["segments"] as? [[String: Any]])
        #expect(media["kind"] as? String == "media" && media["endList"] as? Bool == true)
        #expect(segments.count == 3)
        let ranges = segments.compactMap { $0["byteRange"] as? [String: Int] }
        #expect(ranges.count == 3 && ranges.first?["offset"] == 0)
        for (previous, next) in zip(ranges, ranges.dropFirst()) {
            #expect(next["offset"] == previous["offset"]! + previous["length"]!)
        }

        let aes = try await CLI.run(["hls", "inspect", setup.origin.url("aes/index.m3u8")], cacheDir: nil)
        #expect(aes.output.contains("encryption: AES-128 on 3 of 3 segments"), "\(aes.output)")
        let fmp4 = try await CLI.run(["hls", "inspect", setup.origin.url("fmp4/index.m3u8")], cacheDir: nil)
        #expect(fmp4.output.contains("init sections: init.mp4"), "\(fmp4.output)")
    }

    @Test(arguments: [
        ("missing.m3u8", "404"),
        ("not-a-playlist.txt", "line 1: not an HLS playlist"),
        ("truncated.m3u8", "line 2: EXT-X-STREAM-INF without a URI line"),
        ("garbage.bin", "not UTF-8"),
    ])
    func inspectRefusesBadInputInOneLine(name: String, message: String) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        try workspace.write(Array("hello\n".utf8), as: "not-a-playlist.txt")
        try workspace.write(Array("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1".utf8), as: "truncated.m3u8")
        try workspace.write(
            (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) },
            as: "garbage.bin"
        )
        let origin = try await OriginProcess(directory: workspace.originDirectory, arguments: [])
        for source in [origin.url(name), workspace.originDirectory + "/" + name]
        where !(name == "missing.m3u8" && !source.hasPrefix("http")) {
            let result = try await CLI.run(["hls", "inspect", source], cacheDir: nil)
            #expect(result.status != 0)
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].contains(message), "\(source): \(result.stderr)")
        }
        let scheme = try await CLI.run(["hls", "inspect", "ftp://example.com/a.m3u8"], cacheDir: nil)
        #expect(scheme.status != 0 && scheme.stderr.contains("only http(s) URLs and local files"))
    }
}
