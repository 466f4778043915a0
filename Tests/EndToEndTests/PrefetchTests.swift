import Foundation
import StreamCacheResourceLoaderTesting
import Testing

/// `streamcache prefetch` beside a running `serve` on the same cache directory: once it has
/// fetched the first seconds of twenty items, ffmpeg plays those seconds through `serve` frame for
/// frame as from the origin, with the origin stopped; it fetches a part of each item, not the
/// whole; bad items cost one line each and leave the others fetched.
@Suite(.timeLimit(.minutes(5))) struct PrefetchTests {
    /// The seconds prefetched and played.
    static let seconds = 5

    /// An item made for the test: what a player opens, and the streams ffmpeg plays of it.
    struct Item {
        let path: String
        let maps: [String]
        /// The origin files of its media a player starts with (segments of the first variant
        /// and its audio), relative to the origin folder: the item itself for a progressive file.
        let media: [String]
        /// What a player needs beside the media's seconds: a progressive file's first 64 KiB and
        /// movie box (counted as the whole first 64 KiB; the test files' movie boxes are smaller).
        var overhead: Int64 { media == [path] ? 2 * Int64(64 << 10) : 0 }
    }

    /// 20 s of each kind of item, in `origin`.
    static func makeItems(in origin: String) async throws -> [Item] {
        let video = ["-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=20"]
        let audio = ["-f", "lavfi", "-i", "sine=frequency=440:duration=20"]
        let h264 = ["-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-b:v", "600k"]
        try await ffmpeg(video + audio + h264 + ["-c:a", "aac", origin + "/end.mp4"])
        try await ffmpeg(["-i", origin + "/end.mp4", "-c", "copy", "-movflags", "+faststart", origin + "/start.mp4"])
        try await ffmpeg(audio + ["-c:a", "libmp3lame", "-b:a", "128k", origin + "/cbr.mp3"])
        try await ffmpeg(
            ["-f", "lavfi", "-i", "anoisesrc=duration=20:amplitude=0.3"] + ["-c:a", "libmp3lame", "-q:a", "2"]
                + ["-id3v2_version", "3", "-metadata", "title=Episode", origin + "/vbr.mp3"]
        )
        let variants = origin + "/variants"
        try FileManager.default.createDirectory(atPath: variants, withIntermediateDirectories: true)
        try await ffmpeg(
            video + audio + ["-filter_complex", "[0:v]split=3[a][b][c];[b]scale=240:180[b2];[c]scale=160:120[c2]"]
                + ["-map", "[a]", "-map", "[b2]", "-map", "[c2]", "-map", "1:a"]
                + ["-c:v", "libx264", "-preset", "ultrafast", "-g", "25"]
                + ["-b:v:0", "600k", "-b:v:1", "300k", "-b:v:2", "150k", "-c:a", "aac", "-b:a", "64k"]
                + ["-f", "hls", "-hls_time", "4", "-hls_playlist_type", "vod", "-hls_segment_type", "fmp4"]
                + ["-master_pl_name", "master.m3u8", "-var_stream_map"]
                + ["v:0,agroup:aud v:1,agroup:aud v:2,agroup:aud a:0,agroup:aud,default:yes,language:en"]
                + [variants + "/p%v.m3u8"]
        )
        try await TestStreams.make(.aes, in: origin, seconds: 20)
        try FileManager.default.createDirectory(atPath: origin + "/dash", withIntermediateDirectories: true)
        try await ffmpeg(
            video + audio + h264 + ["-c:a", "aac", "-f", "dash", "-seg_duration", "4", origin + "/dash/manifest.mpd"]
        )
        func files(_ folder: String, _ matching: (String) -> Bool) throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: origin + "/" + folder).filter(matching).map {
                folder + "/" + $0
            }
        }
        return [
            Item(path: "end.mp4", maps: ["0"], media: ["end.mp4"]),
            Item(path: "start.mp4", maps: ["0"], media: ["start.mp4"]),
            Item(path: "cbr.mp3", maps: ["0"], media: ["cbr.mp3"]),
            Item(path: "vbr.mp3", maps: ["0"], media: ["vbr.mp3"]),
            Item(
                path: "variants/master.m3u8",
                maps: ["0:v:0", "0:a:0"],
                media: try files("variants") { ($0.hasPrefix("p0") || $0.hasPrefix("p3")) && $0.hasSuffix(".m4s") }
            ),
            Item(path: TestStreams.Kind.aes.playlist, maps: ["0"], media: try files("aes") { $0.hasSuffix(".ts") }),
            Item(
                path: "dash/manifest.mpd",
                maps: ["0"],
                media: try files("dash") { $0.hasPrefix("chunk-") }
            ),
        ]
    }

    /// Twenty items from the seven made: each again under other names (a hard link of a file,
    /// a link to a stream's folder), so each is new to the cache.
    static func twentyItems(in origin: String) async throws -> [Item] {
        let made = try await makeItems(in: origin)
        var items = made
        for copy in 2...3 {
            for item in made {
                let folder = item.media == [item.path] ? nil : String(item.path.split(separator: "/")[0])
                let renamed: (String) -> String = { path in
                    if let folder { return folder + "\(copy)" + path.dropFirst(folder.count) }
                    let name = path as NSString
                    return name.deletingPathExtension + "\(copy)." + name.pathExtension
                }
                if let folder {
                    try FileManager.default.createSymbolicLink(
                        atPath: origin + "/" + folder + "\(copy)",
                        withDestinationPath: folder
                    )
                } else {
                    try FileManager.default.linkItem(
                        atPath: origin + "/" + item.path,
                        toPath: origin + "/" + renamed(item.path)
                    )
                }
                items.append(Item(path: renamed(item.path), maps: item.maps, media: item.media.map(renamed)))
            }
        }
        return Array(items.prefix(20))
    }

    @Test func eachKindPlaysItsFirstSecondsThroughServeWithTheOriginStopped() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        let origin = setup.workspace.originDirectory
        let items = try await Self.twentyItems(in: origin)
        var direct: [String: [String]] = [:]
        for item in items {
            direct[item.path] = try await Self.frames(setup.origin.url(item.path), maps: item.maps)
        }
        let before = try await setup.origin.settledStats()

        let result = try await CLI.run(
            ["prefetch"] + items.map { setup.origin.url($0.path) } + ["--seconds", "\(Self.seconds)"],
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.output.split(separator: "\n")
        #expect(lines.count == items.count && lines.allSatisfy { $0.hasPrefix("prefetched ") }, "\(result.output)")

        // Of each item's media, at most 1.25 times the bytes of its first seconds came from the
        // origin (the items are 20 s of even bitrate; segments of 4 s but for AES-128's 2 s).
        let after = try await setup.origin.settledStats()
        let requests = after.requests.dropFirst(before.requests.count)
        for item in items {
            let media = Set(item.media.map { "/" + $0 })
            let sent = requests.filter { media.contains($0.path) }.reduce(Int64(0)) { $0 + $1.bodyBytes }
            let whole = try item.media.reduce(Int64(0)) { $0 + (try Self.size(of: origin + "/" + $1)) }
            let allowed = Double(whole) * Double(Self.seconds) / 20 * 1.25 + Double(item.overhead)
            #expect(sent > 0 && Double(sent) <= allowed, "\(item.path): \(sent) bytes of \(whole) fetched")
        }

        _ = try await setup.origin.end(with: SIGKILL)
        for item in items {
            let played = try await Self.frames(setup.url(item.path), maps: item.maps)
            let expected = try #require(direct[item.path])
            #expect(
                played.count > 10 && played == expected,
                "\(item.path): \(played.count) of \(expected.count) frames"
            )
        }
    }

    /// Bad items: one line each on stderr, the good ones fetched, the exit status of the first
    /// failure; usage errors exit 64 before any request.
    @Test func badItemsCostOneLineEachAndLeaveTheOthersFetched() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        let origin = setup.workspace.originDirectory
        try await Self.ffmpeg(["-f", "lavfi", "-i", "sine=duration=10", "-c:a", "libmp3lame", origin + "/good.mp3"])
        try "just some text, not media\n".write(toFile: origin + "/notes.txt", atomically: true, encoding: .utf8)
        try "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-ENDLIST\n".write(
            toFile: origin + "/empty.m3u8",
            atomically: true,
            encoding: .utf8
        )
        try Data([0, 0, 0, 16] + Array("ftypisom".utf8) + [0, 0, 0, 0, 0, 0, 0, 8] + Array("free".utf8))
            .write(to: URL(fileURLWithPath: origin + "/nomovie.mp4"))
        let urls = ["notes.txt", "missing.mp3", "empty.m3u8", "nomovie.mp4", "good.mp3", "good.mp3"]
        let result = try await CLI.run(
            ["prefetch"] + urls.map { setup.origin.url($0) },
            cacheDir: setup.workspace.cacheDirectory
        )
        let errors = result.stderr.split(separator: "\n").filter { $0.hasPrefix("streamcache: prefetch ") }
        #expect(errors.count == 4, "\(result.stderr)")
        for (name, words) in [
            ("notes.txt", "is not a playlist, MPD, MP4 or MP3 file"), ("missing.mp3", "404"),
            ("empty.m3u8", "lists no segment"), ("nomovie.mp4", "no movie box"),
        ] {
            #expect(errors.contains { $0.contains(name) && $0.contains(words) }, "\(name): \(result.stderr)")
        }
        // The URL given twice is fetched once.
        let fetched = result.output.split(separator: "\n")
        #expect(fetched.count == 1 && fetched[0].hasPrefix("prefetched \(setup.origin.url("good.mp3")): mp3, "))
        #expect(result.status != 0 && result.status != 64, "\(result.status)")

        for arguments in [["--seconds", "0"], ["--seconds", "-3"], ["--jobs", "0"], ["not a url"]] {
            let before = try await setup.origin.settledStats()
            let usage = try await CLI.run(
                ["prefetch", setup.origin.url("good.mp3")] + arguments,
                cacheDir: setup.workspace.cacheDirectory
            )
            #expect(usage.status == 64, "\(arguments): \(usage.stderr)")
            #expect(usage.stderr.split(separator: "\n").first?.hasPrefix("streamcache: error:") == true)
            #expect(try await setup.origin.settledStats().requests.count == before.requests.count)
        }
    }

    /// Streams whose files are fresh (last modified a year ago, as a CDN's are fresh by their
    /// fields): once prefetched, they start through `serve` with no request to the origin for a
    /// manifest or an init section (ffmpeg then reads on past the seconds prefetched, which the
    /// origin serves).
    @Test func aFreshPrefetchedStreamStartsWithNoRequestToTheOrigin() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        let origin = setup.workspace.originDirectory
        let video = ["-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=20"]
        let audio = ["-f", "lavfi", "-i", "sine=frequency=440:duration=20"]
        let h264 = ["-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-b:v", "600k"]
        for folder in ["hls", "dash"] {
            try FileManager.default.createDirectory(atPath: origin + "/" + folder, withIntermediateDirectories: true)
        }
        try await Self.ffmpeg(
            video + audio + ["-map", "0:v", "-map", "1:a"] + h264 + ["-c:a", "aac", "-f", "hls", "-hls_time", "4"]
                + ["-hls_playlist_type", "vod", "-hls_segment_type", "fmp4", "-master_pl_name", "master.m3u8"]
                + ["-var_stream_map", "v:0,agroup:aud a:0,agroup:aud,default:yes", origin + "/hls/p%v.m3u8"]
        )
        try await Self.ffmpeg(video + audio + h264 + ["-c:a", "aac", "-f", "dash", origin + "/dash/manifest.mpd"])
        let yearAgo = Date(timeIntervalSinceNow: -365 * 86_400)
        for path in try FileManager.default.subpathsOfDirectory(atPath: origin) {
            try FileManager.default.setAttributes([.modificationDate: yearAgo], ofItemAtPath: origin + "/" + path)
        }
        let items = ["hls/master.m3u8", "dash/manifest.mpd"]
        let prefetched = try await CLI.run(
            ["prefetch"] + items.map { setup.origin.url($0) },
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(prefetched.status == 0, "\(prefetched.stderr)")
        for item in items {
            let before = try await setup.origin.settledStats().requests.count
            let played = try await Self.frames(setup.url(item), maps: ["0"])
            let asked = try await setup.origin.settledStats().requests.dropFirst(before).map(\.path)
            let starts = asked.filter { $0.hasSuffix(".m3u8") || $0.hasSuffix(".mpd") || $0.contains("init") }
            #expect(played.count > 100 && starts.isEmpty, "\(item): \(played.count) frames, asked \(asked)")
        }
    }

    /// AVPlayer's start through `serve` (``HLSPlayerSimulator``: the multivariant playlist, the
    /// first variant's playlist and its audio rendition's, their init sections, then whole
    /// segments) of a stream of three variants whose files are fresh: after a prefetch of the
    /// seconds its first segments hold, it asks the origin nothing, and every byte is the
    /// origin's. (A player that reads whole segments needs the seconds prefetched to end on a
    /// segment's end: the part of a segment past them is the origin's to send.)
    @Test func anHLSPlayersStartThroughServeAsksTheOriginNothing() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        let origin = setup.workspace.originDirectory
        let items = try await Self.makeItems(in: origin)
        let yearAgo = Date(timeIntervalSinceNow: -365 * 86_400)
        for path in try FileManager.default.subpathsOfDirectory(atPath: origin) {
            try FileManager.default.setAttributes([.modificationDate: yearAgo], ofItemAtPath: origin + "/" + path)
        }
        let master = try #require(items.first { $0.path.hasSuffix("master.m3u8") }).path
        // Two segments of 4 s.
        let prefetched = try await CLI.run(
            ["prefetch", setup.origin.url(master), "--seconds", "8"],
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(prefetched.status == 0, "\(prefetched.stderr)")
        let before = try await setup.origin.settledStats().requests.count
        let fetches = try await HLSPlayerSimulator().play(
            try #require(URL(string: setup.url(master))),
            variant: 0,
            segments: 0..<2
        )
        let asked = try await setup.origin.settledStats().requests.dropFirst(before).map(\.path)
        #expect(asked.isEmpty, "\(asked)")
        #expect(fetches.count == 9, "\(fetches.map(\.url.lastPathComponent))")
        for fetch in fetches where fetch.url.pathExtension == "m4s" {
            let name = fetch.url.path.split(separator: "/").suffix(2).joined(separator: "/")
            let served = [UInt8](try Data(contentsOf: URL(fileURLWithPath: origin + "/" + name)))
            #expect(fetch.bytes == served, "\(name)")
        }
    }

    /// `POST /prefetch` to a running `serve`: the items play their first seconds with the
    /// origin stopped; a newer request takes the place of the older one, whose items not started
    /// are never asked of the origin; a web page, a body that is not the JSON asked for and a
    /// `GET` are refused.
    @Test func theRunningServerPrefetchesWhatItIsPostedAndTheNewestPostWins() async throws {
        // 1.5 s a response: the prefetch of an MP4 (its first bytes, the box past its media, its
        // movie box, its samples) takes several seconds, so the second request comes while the
        // first item of the first is still fetched, however loaded the machine.
        let setup = try await ProxySetup(originArguments: ["--latency", "1500"])
        defer { setup.remove() }
        let origin = setup.workspace.originDirectory
        let video = ["-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=20"]
        let h264 = ["-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-b:v", "600k"]
        for name in ["a", "b", "c", "d", "e", "f"] { try await Self.ffmpeg(video + h264 + [origin + "/\(name).mp4"]) }
        let prefetch = setup.proxy.url("prefetch")
        func post(_ names: [String], _ extra: [String] = []) async throws -> (status: String, body: String) {
            let body =
                "{\"urls\": [\(names.map { "\"\(setup.origin.url($0))\"" }.joined(separator: ", "))], \"jobs\": 1}"
            let result = try await Tool.run("curl", ["-s", "-i", "-X", "POST", "--data", body] + extra + [prefetch])
            let lines = result.output.split(separator: "\r\n", omittingEmptySubsequences: false)
            return (String(lines.first ?? ""), String(lines.last ?? ""))
        }

        let first = try await post(["a.mp4", "b.mp4", "c.mp4", "d.mp4"])
        #expect(first.status.hasPrefix("HTTP/1.1 202") && first.body == "{\"items\":4}\n", "\(first)")
        try await Task.sleep(for: .milliseconds(300))
        let second = try await post(["e.mp4"])
        #expect(second.status.hasPrefix("HTTP/1.1 202"), "\(second)")
        let requests = try await Self.settledRequests(setup.origin, asking: "/e.mp4")
        let asked = Set(requests.map(\.path))
        #expect(!asked.contains("/c.mp4") && !asked.contains("/d.mp4"), "\(asked.sorted())")
        #expect(asked.contains("/e.mp4"), "\(asked.sorted())")

        let expected = try await Self.frames(origin + "/e.mp4", maps: ["0"])
        _ = try await setup.origin.end(with: SIGKILL)
        let played = try await Self.frames(setup.url("e.mp4"), maps: ["0"])
        #expect(played.count > 100 && played == expected, "\(played.count) of \(expected.count) frames")

        #expect(try await post(["a.mp4"], ["-H", "Origin: https://example.com"]).status.hasPrefix("HTTP/1.1 403"))
        let notJSON = try await Tool.run(
            "curl",
            ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "--data", "a.mp4", prefetch]
        )
        #expect(notJSON.output == "400")
        let get = try await Tool.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", prefetch])
        #expect(get.output == "405")
    }

    /// With the budget full, bytes only a prefetch brought go before played ones, whatever their
    /// age; a play makes prefetched bytes a player's; and prefetched bytes keep to their share.
    @Test func prefetchedBytesNeverPlayedAreEvictedFirstAndKeepToTheirShare() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        for name in ["a", "b", "c", "d", "e"] {
            try await Self.ffmpeg(
                ["-f", "lavfi", "-i", "sine=frequency=440:duration=60", "-c:a", "libmp3lame", "-b:a", "128k"]
                    + [workspace.originDirectory + "/\(name).mp3"]
            )
        }
        var cache = workspace.cacheDirectory
        func run(_ arguments: [String]) async throws {
            let result = try await CLI.run(arguments, cacheDir: cache)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        // A player reads the first 100,000 bytes; a prefetch of 5 s takes 88,233.
        func play(_ name: String) async throws {
            try await run(["get", origin.url(name), "-r", "0-99999", "-o", workspace.output(name)])
        }
        // The budget holds two items, not three.
        try await run(["config", "--max-size", "250K", "--prefetch-share", "100%"])
        try await play("a.mp3")
        try await run(["prefetch", origin.url("b.mp3")])
        try await play("d.mp3")
        var held = try await CLI.cachedBytes(cacheDir: cache)
        // Least recently used, a would go: b, prefetched and never played, goes instead.
        #expect(held["b.mp3"] == nil && held["a.mp3"] != nil && held["d.mp3"] != nil, "\(held)")

        // In a new cache: c is played after its prefetch, so its bytes are a player's; a, the
        // least recently used, goes.
        cache += "-played"
        defer { try? FileManager.default.removeItem(atPath: cache) }
        try await run(["config", "--max-size", "250K", "--prefetch-share", "100%"])
        try await play("a.mp3")
        try await run(["prefetch", origin.url("c.mp3")])
        try await play("c.mp3")
        try await play("d.mp3")
        held = try await CLI.cachedBytes(cacheDir: cache)
        #expect(held["a.mp3"] == nil && held["c.mp3"] != nil && held["d.mp3"] != nil, "\(held)")

        // A share of 5% of 2 MiB holds one prefetched item: of two, the later stays.
        try await run(["config", "--max-size", "2M", "--prefetch-share", "5%"])
        try await run(["prefetch", origin.url("b.mp3"), origin.url("e.mp3"), "--jobs", "1"])
        held = try await CLI.cachedBytes(cacheDir: cache)
        #expect(held["b.mp3"] == nil && held["e.mp3"] != nil && held["d.mp3"] != nil, "\(held)")
        let invalid = try await CLI.run(["config", "--prefetch-share", "150%"], cacheDir: cache)
        #expect(invalid.status == 64, "\(invalid.stderr)")
    }

    // MARK: Helpers

    /// The origin's requests once `path` was asked for and none has come for 5 s (at most 2
    /// minutes).
    static func settledRequests(
        _ origin: OriginProcess,
        asking path: String
    ) async throws
        -> [OriginProcess.Stats.Request]
    {
        var last = -1
        var quiet = 0
        for _ in 0..<120 {
            let stats = try await origin.settledStats()
            quiet = stats.requests.count == last ? quiet + 1 : 0
            if quiet >= 5, stats.requests.contains(where: { $0.path == path }) { return stats.requests }
            last = stats.requests.count
            try await Task.sleep(for: .seconds(1))
        }
        return try await origin.settledStats().requests
    }

    /// What ffmpeg decodes of the first seconds of `source`, one line per frame of `maps`.
    static func frames(_ source: String, maps: [String]) async throws -> [String] {
        let result = try await Tool.run(
            "ffmpeg",
            ["-hide_banner", "-v", "error", "-threads", "1"]
                + (source.hasSuffix(".m3u8") ? ["-allowed_extensions", "ALL"] : []) + ["-i", source]
                + maps.flatMap { ["-map", $0] } + ["-t", "\(seconds)", "-f", "framemd5", "-"]
        )
        #expect(result.status == 0, "ffmpeg \(source): \(result.stderr)")
        return result.output.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    }

    static func ffmpeg(_ arguments: [String]) async throws {
        let made = try await Tool.run("ffmpeg", ["-hide_banner", "-v", "error", "-y"] + arguments)
        #expect(made.status == 0, "ffmpeg \(arguments.joined(separator: " ")): \(made.stderr)")
    }

    static func size(of path: String) throws -> Int64 {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
    }
}
