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
}
