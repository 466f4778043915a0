import Foundation
import StreamCacheTesting
import Testing

/// What every user of the command line relies on: a budget that holds, pins that stay, live
/// playlists never stale, errors in one plain line, ranges and binary output as curl takes them.
@Suite(.timeLimit(.minutes(3))) struct CommandLineBasicsTests {
    struct Listing: Decodable {
        struct Totals: Decodable {
            let resources: Int
            let cachedBytes: Int64
            let maxSize: Int64
            let pinned: Int
        }
        struct Resource: Decodable {
            let url: String
            let cachedBytes: Int64
            let pinned: Bool
        }
        let totals: Totals
        let resources: [Resource]
    }

    func list(_ cacheDirectory: String) async throws -> Listing {
        let listed = try await CLI.run(["ls", "--json"], cacheDir: cacheDirectory)
        return try JSONDecoder().decode(Listing.self, from: listed.stdout)
    }

    @Test func theBudgetIsSetOnceAndHonouredByLaterCommands() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        for name in ["a", "b", "c"] { try workspace.write(TestData.bytes(count: 1_000_000, seed: 590), as: name) }
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let cache = workspace.cacheDirectory
        for name in ["a", "b"] {
            #expect(
                try await CLI.run(["get", origin.url(name), "-o", workspace.output(name)], cacheDir: cache).status == 0
            )
        }
        // rm of one resource never evicts the others, and takes no budget.
        let refused = try await CLI.run(["rm", origin.url("a"), "--max-size", "1M"], cacheDir: cache)
        #expect(refused.status != 0)
        #expect(try await list(cache).totals.cachedBytes == 2_000_000)
        let zero = try await CLI.run(["config", "--max-size", "0"], cacheDir: cache)
        #expect(zero.status != 0 && zero.stderr.split(separator: "\n").count == 1)

        let set = try await CLI.run(["config", "--max-size", "2M"], cacheDir: cache)
        #expect(set.status == 0 && set.output.contains("2.0 MiB"), "\(set.output)\(set.stderr)")
        // A later plain get keeps to the stored budget: least recently used out first.
        #expect(try await CLI.run(["get", origin.url("c"), "-o", workspace.output("c")], cacheDir: cache).status == 0)
        let after = try await list(cache)
        #expect(after.totals.maxSize == 2 << 20)
        #expect(after.totals.cachedBytes <= 2 << 20, "\(after.totals.cachedBytes) bytes over a 2 MiB budget")
        #expect(!after.resources.contains { $0.url.hasSuffix("/a") }, "the least recently used stayed")
    }

    @Test func pinnedResourcesAreNeverEvicted() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        for name in ["a", "b"] { try workspace.write(TestData.bytes(count: 1_000_000, seed: 591), as: name) }
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let cache = workspace.cacheDirectory
        for name in ["a", "b"] {
            #expect(
                try await CLI.run(["get", origin.url(name), "-o", workspace.output(name)], cacheDir: cache).status == 0
            )
        }
        let pinned = try await CLI.run(["pin", origin.url("a")], cacheDir: cache)
        #expect(pinned.status == 0, "\(pinned.stderr)")
        #expect(try await CLI.run(["config", "--max-size", "1M"], cacheDir: cache).status == 0)
        let listing = try await list(cache)
        let pinnedBytes = listing.resources.first { $0.url == origin.url("a") }?.cachedBytes
        #expect(pinnedBytes == 1_000_000, "the pinned resource was evicted")
        #expect(listing.totals.cachedBytes <= 1 << 20, "the unpinned one was not evicted")
        #expect(listing.totals.pinned == 1)
        #expect(try await CLI.run(["unpin", origin.url("a")], cacheDir: cache).status == 0)
        #expect(try await CLI.run(["pin", origin.url("nope")], cacheDir: cache).status != 0)
    }

    @Test func aGrowingLivePlaylistIsNeverStale() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        var playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:2,\nseg0.ts\n"
        let path = setup.workspace.originDirectory + "/live.m3u8"
        try playlist.write(toFile: path, atomically: true, encoding: .utf8)
        let first = try await Curl.fetch(setup.url("live.m3u8"))
        #expect(String(decoding: first.body, as: UTF8.self).contains("seg0.ts"))
        for segment in 1...3 {
            playlist += "#EXTINF:2,\nseg\(segment).ts\n"
            try playlist.write(toFile: path, atomically: true, encoding: .utf8)
            let next = try await Curl.fetch(setup.url("live.m3u8"))
            #expect(String(decoding: next.body, as: UTF8.self).contains("seg\(segment).ts"), "stale after \(segment)")
        }
        // Once it ends it is a VOD playlist: cached like any resource.
        playlist += "#EXT-X-ENDLIST\n"
        try playlist.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(String(decoding: try await Curl.fetch(setup.url("live.m3u8")).body, as: UTF8.self).contains("ENDLIST"))
    }

    @Test func errorsAreOnePlainLine() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let busy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let cases: [([String], String)] = [
            (["serve", "--port", "\(busy.port)"], "port \(busy.port) is in use"),
            (
                ["gte", "http://127.0.0.1:1/a"],
                "unknown command 'gte'; did you mean 'get'? (see 'streamcache --help')"
            ),
            (["get", "example.com/a.mp3"], "add http:// or https://"),
            (["ls", "--cache-dir", workspace.originDirectory + "/file"], "is a file, not a directory"),
            (["get", "http://127.0.0.1:1/a", "--cache-dir", workspace.originDirectory + "/file"], "is a file"),
        ]
        try Data("x".utf8).write(to: URL(fileURLWithPath: workspace.originDirectory + "/file"))
        for (arguments, expected) in cases {
            let result = try await CLI.run(arguments, cacheDir: workspace.cacheDirectory, timeout: .seconds(20))
            #expect(result.status != 0, "\(arguments)")
            #expect(result.stderr.contains(expected), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
        }
        let bare = try await CLI.run([], cacheDir: workspace.cacheDirectory)
        #expect(bare.output.contains("SUBCOMMANDS"), "bare streamcache printed: \(bare.output)")
    }

    @Test func suffixRangesAndBinaryOutputToATerminal() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 5000, seed: 592)
        try workspace.write(data, as: "a.bin")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        for range in [["--range", "-100"], ["--range=-100"]] {
            let got = try await CLI.run(
                ["get", origin.url("a.bin")] + range + ["-o", "-"],
                cacheDir: workspace.cacheDirectory
            )
            #expect(got.status == 0, "\(range): \(got.stderr)")
            #expect([UInt8](got.stdout) == Array(data.suffix(100)), "\(range)")
        }
        // On a terminal (a pty), binary output is refused unless -o - asks for it.
        let spawn = "import pty, sys; sys.exit(pty.spawn(sys.argv[1:]) >> 8)"
        let environment = [
            "env", "STREAMCACHE_DIR=\(workspace.cacheDirectory)", CLI.binary, "get", origin.url("a.bin"),
        ]
        let refused = try await Tool.run("python3", ["-c", spawn] + environment)
        #expect(refused.status != 0 && refused.output.contains("terminal"), "\(refused.output)")
        let forced = try await Tool.run("python3", ["-c", spawn] + environment + ["-o", "-"])
        #expect(forced.status == 0, "\(forced.output.prefix(200))")
    }

    @Test func aPlayerThatHangsUpIsNoErrorAndTheAccessLogSaysWhatItAsked() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        try workspace.write(TestData.bytes(count: 4_000_000, seed: 593), as: "a.bin")
        let origin = try await OriginProcess(directory: workspace.originDirectory, arguments: ["--rate", "500K"])
        let access = workspace.output("access.log")
        let errors = workspace.output("error.log")
        let proxy = try await ListeningProcess(
            ["serve", "--access-log", access, "--error-log", errors],
            cacheDir: workspace.cacheDirectory
        )
        // A seek: the player drops its connection mid-body.
        _ = try await Tool.run(
            "curl",
            [
                "-s", "-o", "/dev/null", "--max-time", "1", "-A", "TestPlayer/1.0", "-r", "1000-",
                proxy.url(origin.url("a.bin")),
            ]
        )
        try await Task.sleep(for: .milliseconds(500))
        try await proxy.stop()
        let errorLines = try String(contentsOfFile: errors, encoding: .utf8).split(separator: "\n")
            .filter { !$0.hasPrefix("#") }
        #expect(errorLines.isEmpty, "a seek wrote error lines: \(errorLines)")
        let log = try String(contentsOfFile: access, encoding: .utf8)
        #expect(log.contains("#Fields: date time c-ip cs-method cs-uri cs(Range) cs(User-Agent) sc-status"))
        #expect(
            log.contains("bytes=1000-") && log.contains("TestPlayer/1.0") && log.contains("client-went-away"),
            "\(log)"
        )
    }
}
