import Foundation
import StreamCacheTesting
import Testing

/// curl's and yt-dlp's options as their users type them: cookies that reach only the origins
/// they match and are never stored, `--limit-rate`, `--retry`, `-s` and `-I`.
@Suite(.timeLimit(.minutes(3))) struct CurlHabitsTests {
    /// A Netscape cookie file: one cookie for the origin's host, and others that must not go
    /// there (another domain, another path, https only, expired).
    static let cookieFile = """
        # Netscape HTTP Cookie File
        127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\tgood1
        #HttpOnly_127.0.0.1\tFALSE\t/media\tFALSE\t4102444800\tmedia\tgood2
        other.example\tTRUE\t/\tFALSE\t0\telsewhere\tbad1
        127.0.0.1\tFALSE\t/private\tFALSE\t0\tprivate\tbad2
        127.0.0.1\tFALSE\t/\tTRUE\t0\tsecure\tbad3
        127.0.0.1\tFALSE\t/\tFALSE\t1\texpired\tbad4

        """

    @Test func cookiesReachOnlyTheOriginsTheyMatchAndAreNeverStored() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await ScriptedOrigin(["/media/a.bin": ["status": 200, "size": 20000]], in: workspace)
        // A redirect to the same server under another name (localhost): another origin.
        let port = try #require(URL(string: origin.base)?.port)
        try origin.rescript([
            "/media/a.bin": ["status": 200, "size": 20000],
            "/media/moved.bin": ["status": 302, "headers": [["Location", "http://localhost:\(port)/media/b.bin"]]],
            "/media/b.bin": ["status": 200, "size": 100],
        ])
        let file = workspace.outputDirectory + "/cookies.txt"
        try Self.cookieFile.write(toFile: file, atomically: true, encoding: .utf8)

        let fromFile = try await CLI.run(
            ["get", origin.url("media/a.bin"), "-b", file, "-o", workspace.outputDirectory + "/a"],
            cacheDir: workspace.cacheDirectory
        )
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        #expect(
            try await origin.requests("media/a.bin").flatMap { $0.values("Cookie") } == ["session=good1; media=good2"]
        )

        let given = try await CLI.run(
            [
                "get", origin.url("media/moved.bin"), "-b", "token=s3cret; user=me", "-o",
                workspace.outputDirectory + "/b",
            ],
            cacheDir: workspace.cacheDirectory
        )
        #expect(given.status == 0, "\(given.stderr)")
        #expect(
            try await origin.requests("media/moved.bin").flatMap { $0.values("Cookie") } == ["token=s3cret; user=me"]
        )
        #expect(
            try await origin.requests("media/b.bin").flatMap { $0.values("Cookie") }.isEmpty,
            "sent to another origin"
        )

        // Nothing of them in the cache directory: index, data files, settings.
        let walker = try #require(FileManager.default.enumerator(atPath: workspace.cacheDirectory))
        for case let name as String in walker {
            guard let data = FileManager.default.contents(atPath: workspace.cacheDirectory + "/" + name) else {
                continue
            }
            for secret in ["good1", "good2", "s3cret"] {
                #expect(data.range(of: Data(secret.utf8)) == nil, "\(secret) stored in \(name)")
            }
        }
    }

    @Test(arguments: [
        (["-b", "/no/such/cookies.txt"], "cannot read the cookie file"),
        (["-b", "NOTCOOKIES"], "cannot read the cookie file"),
        (["--limit-rate", "0"], "invalid --limit-rate"),
        (["--limit-rate", "-5"], "--limit-rate"),
        (["--limit-rate=-5"], "invalid --limit-rate"),
        (["--limit-rate", "1Q"], "invalid --limit-rate"),
        (["--retry=-1"], "invalid --retry"),
    ])
    func badOptionsAreUsageErrors(arguments: [String], says: String) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let result = try await CLI.run(
            ["get", "http://127.0.0.1:9/a.bin", "-o", workspace.outputDirectory + "/a"] + arguments,
            cacheDir: workspace.cacheDirectory
        )
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains(says), "\(result.stderr)")
    }

    @Test func aFileThatIsNotANetscapeCookieFileIsRefusedNamingTheLine() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let file = workspace.outputDirectory + "/cookies.json"
        try "# Netscape HTTP Cookie File\n{\"name\": \"a\", \"value\": \"b\"}\n".write(
            toFile: file,
            atomically: true,
            encoding: .utf8
        )
        for command in [["get", "http://127.0.0.1:9/a.bin"], ["download", "http://127.0.0.1:9/a.m3u8"], ["serve"]] {
            let result = try await CLI.run(command + ["-b", file], cacheDir: workspace.cacheDirectory)
            #expect(result.status == 64, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("not a Netscape cookie file: line 2"), "\(command): \(result.stderr)")
        }
    }

    /// 2 MB at `--limit-rate 500k` cannot come in under 3.9 s (it takes about 4; without the
    /// limit, well under one). A bound from below only: a loaded machine makes it slower, never
    /// faster.
    @Test func limitRateKeepsTheOriginsBytesToTheRate() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        try Data(count: 2_000_000).write(to: URL(fileURLWithPath: workspace.originDirectory + "/two.bin"))
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let started = ContinuousClock.now
        let result = try await CLI.run(
            ["get", origin.url("two.bin"), "--limit-rate", "500k", "-s", "-o", workspace.outputDirectory + "/two"],
            cacheDir: workspace.cacheDirectory
        )
        let seconds = started.duration(to: .now) / .seconds(1)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        #expect(seconds >= 3.9, "2 MB at 500 KiB/s took \(seconds) s")
    }

    @Test func headPrintsTheResponseFieldsAndRetryBoundsTheAttempts() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await ScriptedOrigin(
            [
                "/a.bin": [
                    "status": 200, "size": 5000, "headers": [["ETag", "\"v1\""], ["Cache-Control", "max-age=60"]],
                ],
                "/busy.bin": ["status": 503],
            ],
            in: workspace
        )
        let head = try await CLI.run(["get", "-I", origin.url("a.bin")], cacheDir: workspace.cacheDirectory)
        #expect(head.status == 0, "\(head.stderr)")
        for line in ["Content-Length: 5000", "ETag: \"v1\"", "Accept-Ranges: bytes", "Cache-Control: max-age=60"] {
            #expect(head.output.components(separatedBy: "\r\n").contains(line), "\(line) not in \(head.output)")
        }
        let busy = try await CLI.run(
            ["get", origin.url("busy.bin"), "--retry", "1", "-o", workspace.outputDirectory + "/x"],
            cacheDir: workspace.cacheDirectory
        )
        #expect(busy.status == 22, "\(busy.stderr)")
        #expect(try await origin.requests("busy.bin").count == 2, "--retry 1: one request and one more")
    }

    /// curl's options as its users type them, each with its meaning or as `get` already behaves.
    @Test func curlsOptionsWorkAsCurlUsersTypeThem() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await ScriptedOrigin(
            [
                "/a.bin": ["status": 200, "size": 30000, "headers": [["Cache-Control", "max-age=600"]]],
                "/moved.bin": ["status": 302, "headers": [["Location", "/a.bin"]]],
                "/slow.bin": ["status": 200, "endless": true, "rate": 1000],
            ],
            in: workspace
        )
        let body = ScriptedOrigin.body(size: 30000)
        let output = workspace.outputDirectory
        func get(_ arguments: [String]) async throws -> ProcessResult {
            try await CLI.run(["get"] + arguments, cacheDir: workspace.cacheDirectory, in: output)
        }
        let fsSL = try await get([origin.url("moved.bin"), "-fsSL", "-A", "Player/2.0", "-u", "me:pw", "-o", "a"])
        #expect(fsSL.status == 0 && fsSL.stderr.isEmpty, "\(fsSL.stderr)")
        #expect(workspace.read(output + "/a") == body)
        let sent = try #require(try await origin.requests("moved.bin").first)
        #expect(sent.values("User-Agent") == ["Player/2.0"])
        #expect(sent.values("Authorization") == ["Basic " + Data("me:pw".utf8).base64EncodedString()])

        try FileManager.default.createDirectory(atPath: output + "/dir", withIntermediateDirectories: true)
        let named = try await get([origin.url("a.bin"), "-O", "--output-dir", "dir", "--compressed", "-S", "-q"])
        #expect(named.status == 0 && named.stderr.isEmpty, "\(named.stderr)")
        #expect(workspace.read(output + "/dir/a.bin") == body)

        let verbose = try await get([origin.url("a.bin"), "-v", "-u", "me:s3cretpw", "-o", "v"])
        #expect(verbose.status == 0, "\(verbose.stderr)")
        for line in ["> GET \(origin.url("a.bin"))", "< HTTP/1.1 200 OK", "< Content-Length: 30000"] {
            #expect(verbose.stderr.contains(line), "\(line) not in \(verbose.stderr)")
        }
        #expect(!verbose.stderr.contains("s3cretpw") && !verbose.stderr.contains("Authorization"))

        let asked = try await origin.requests("a.bin").count
        let continued = try await get([origin.url("a.bin"), "-C", "-", "-o", "a", "--connect-timeout", "5"])
        #expect(continued.status == 0, "\(continued.stderr)")
        #expect(workspace.read(output + "/a") == body)
        #expect(try await origin.requests("a.bin").count == asked, "cached bytes were fetched again")

        let started = ContinuousClock.now
        let slow = try await get([origin.url("slow.bin"), "--max-time", "1", "-o", "slow"])
        #expect(slow.status == 28, "\(slow.stderr)")
        #expect(slow.stderr.contains("timed out after 1.0 s"), "\(slow.stderr)")
        // The body never ends: without the limit the run would last until CLI.run kills it
        // (120 s). A busy test run has taken 15 s to start and stop the process.
        #expect(started.duration(to: .now) < .seconds(60))
        #expect(!FileManager.default.fileExists(atPath: output + "/slow"))

        for (arguments, says) in [
            (["-C", "100", "-o", "b"], "give -C -"),
            (["-C", "-", "-o", "-"], "-C - goes on with a file"),
            (["-u", "nocolon", "-o", "b"], "invalid -u"),
            (["--max-time", "0", "-o", "b"], "invalid --max-time"),
        ] {
            let refused = try await get([origin.url("a.bin")] + arguments)
            #expect(refused.status == 64, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.contains(says), "\(arguments): \(refused.stderr)")
        }
    }

    /// yt-dlp's names for what `download` does: `-F`, `-N`, `--sub-langs`, `--cookies`, `-q`.
    @Test func ytDlpsNamesAreTakenByDownload() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.multi, in: setup.workspace.originDirectory)
        // -F lists the tracks, and downloads nothing.
        let url = setup.origin.url("multi/master.m3u8")
        let listed = try await CLI.run(["download", "-F", url], cacheDir: setup.workspace.cacheDirectory)
        #expect(listed.status == 0 && listed.output.contains("choose with -f"), "\(listed.output)")
        #expect(try await setup.assets().isEmpty)
        let result = try await CLI.run(
            [
                "download", setup.origin.url("multi/master.m3u8"), "-N", "2", "--sub-langs", "all", "--cookies",
                "a=1", "-q", "--max-time", "120",
            ],
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        let asset = try #require(try await setup.assets().first)
        #expect(asset.state == "complete" && !asset.subtitles.isEmpty, "\(asset.subtitles)")
    }

    /// `-F` lists every track with the id `-f` takes, for HLS and DASH alike, and `-f` downloads
    /// the tracks it names.
    @Test func theIdsThatMinusFListsAreTheOnesMinusfTakes() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.variants, in: setup.workspace.originDirectory)
        let hls = setup.origin.url("variants/master.m3u8")
        let listed = try await CLI.run(["download", "-F", hls], cacheDir: setup.workspace.cacheDirectory)
        let rows = listed.output.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(rows.contains { $0.first == "v2" && $0.contains("160x120") && $0.contains { $0.hasPrefix("~") } })
        #expect(rows.contains { $0.first == "a2" && $0.contains("de") }, "\(listed.output)")
        #expect(try await setup.assets().isEmpty)

        let chosen = try await CLI.run(
            ["download", hls, "-f", "v2+a2", "-q"],
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(chosen.status == 0, "\(chosen.stderr)")
        let asset = try #require(try await setup.assets().first)
        #expect(asset.variant?.resolution == "160x120" && asset.audio == ["de"], "\(asset)")

        // The same ids for a DASH MPD of two video representations.
        let folder = setup.workspace.originDirectory + "/ladder"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let made = try await Tool.run(
            "ffmpeg",
            [
                "-hide_banner", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=10:duration=4",
                "-f", "lavfi", "-i", "sine=frequency=440:duration=4", "-map", "0:v", "-map", "0:v", "-map", "1:a",
                "-c:v", "libx264", "-preset", "ultrafast", "-g", "10", "-s:v:1", "160x120", "-b:v:0", "400k",
                "-b:v:1", "100k", "-c:a", "aac", "-f", "dash", "-seg_duration", "2", "-adaptation_sets",
                "id=0,streams=v id=1,streams=a", folder + "/manifest.mpd",
            ]
        )
        #expect(made.status == 0, "\(made.stderr)")
        let dash = setup.origin.url("ladder/manifest.mpd")
        let dashListed = try await CLI.run(["download", "-F", dash], cacheDir: setup.workspace.cacheDirectory)
        let dashRows = dashListed.output.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(dashRows.contains { $0.first == "v2" && $0.contains("160x120") }, "\(dashListed.output)")
        #expect(dashRows.contains { $0.first == "a1" }, "\(dashListed.output)")
        let dashChosen = try await CLI.run(
            ["download", dash, "-f", "v2", "-q"],
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(dashChosen.status == 0, "\(dashChosen.stderr)")
        let package = try #require(try await setup.assets().first { $0.url == dash }?.path)
        let probe = try await Tool.run(
            "ffprobe",
            ["-v", "error", "-show_entries", "stream=height", "-of", "csv=p=0", package]
        )
        #expect(probe.output.split(separator: "\n").contains("120"), "\(probe.output) \(probe.stderr)")

        // An id past the end says which there are; what is no id is a usage error.
        let missing = try await CLI.run(["download", hls, "-f", "v7"], cacheDir: setup.workspace.cacheDirectory)
        #expect(missing.status != 0 && missing.stderr.contains("the video formats are v1…v2"), "\(missing.stderr)")
        let invalid = try await CLI.run(["download", hls, "-f", "best"], cacheDir: setup.workspace.cacheDirectory)
        #expect(invalid.status == 64 && invalid.stderr.contains("invalid -f 'best'"), "\(invalid.stderr)")
    }

    /// `-x`, yt-dlp's audio only: the audio rendition of an HLS stream and the audio
    /// representation of a DASH one are fetched without any video; a stream whose audio is
    /// inside its video is fetched whole; `-o x.%(ext)s` writes `x.m4a`, audio alone, for each.
    @Test(arguments: ["multi/master.m3u8", "ts/index.m3u8", "dash/manifest.mpd"])
    func minusXKeepsTheAudioAlone(stream: String) async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let origin = setup.workspace.originDirectory
        switch stream {
        case "multi/master.m3u8": try await TestStreams.make(.multi, in: origin)
        case "ts/index.m3u8": try await TestStreams.make(.ts, in: origin)
        default: try await DASHThroughServeTests.make(.timeline, in: origin + "/dash")
        }
        let folder = setup.workspace.outputDirectory
        let result = try await CLI.run(
            ["download", setup.origin.url(stream), "-x", "-o", "x.%(ext)s", "-q"],
            cacheDir: setup.workspace.cacheDirectory,
            in: folder
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["x.m4a"])
        let probed = try await Tool.run(
            "ffprobe",
            ["-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0", folder + "/x.m4a"]
        )
        #expect(probed.output.split(separator: "\n") == ["audio"], "\(probed.output)")
        let paths = try await setup.origin.stats().requests.map(\.path)
        if stream != "ts/index.m3u8" {
            // No video segment was asked for: the variant's own playlist (HLS), stream 0 (DASH).
            let video = paths.filter { $0.contains("chunk-stream0") || $0.hasSuffix("/multi/p0.m3u8") }
            #expect(video.isEmpty, "\(paths)")
        }
    }
}
