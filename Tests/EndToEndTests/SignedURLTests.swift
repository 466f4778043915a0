import Foundation
import StreamCache
import StreamCacheHTTP
import StreamCacheResourceLoader
import StreamCacheResourceLoaderTesting
import StreamCacheServer
import StreamCacheTesting
import Testing

/// Signed URLs: the same episode under a new token every session. With a key rule the token is
/// left out of the cache key, so the episode's bytes are fetched once; the origin is still asked
/// with the URL the player gave.
@Suite(.timeLimit(.minutes(3))) struct SignedURLTests {
    static let signing = "Expires,Signature,Key-Pair-Id"

    /// The bodies `origin` has sent so far (a revalidation's `304` sends none).
    static func bodies(_ origin: PythonOrigin) -> Int {
        origin.requests().filter { $0.contains("\" 200 ") }.count
    }

    static func signed(_ name: String, token: Int) -> String {
        "\(name)?Expires=\(1_900_000_000 + token)&Signature=sig\(token)&Key-Pair-Id=K"
    }

    /// Two plays through `serve` of one episode behind two tokens, from `python3 -m http.server`:
    /// two bodies without a rule; with it, one body and, for the second token, one check of the
    /// first bytes (``TokenContentTests``), which this origin, ignoring `Range`, answers with a
    /// body the cache stops reading after them.
    @Test func twoTokensCostOneBodyThroughServeOnceTheRuleIsSet() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 2_000_000, seed: 700)
        try workspace.write(data, as: "ep.mp3")
        let origin = try await PythonOrigin(directory: workspace.originDirectory)
        defer { origin.stop() }

        func bodiesForTwoPlays(cacheDir: String, rule: [String]?) async throws -> Int {
            if let rule {
                let set = try await CLI.run(["config", "--key-ignore-query"] + rule, cacheDir: cacheDir)
                #expect(set.status == 0, "\(set.stderr)")
            }
            let before = Self.bodies(origin)
            let proxy = try await ListeningProcess(["serve"], cacheDir: cacheDir)
            for token in 1...2 {
                let reply = try await Curl.fetch(proxy.url(origin.url(Self.signed("ep.mp3", token: token))))
                #expect(reply.status == 200 && TestData.mismatch([UInt8](reply.body), data) == nil)
            }
            try await proxy.stop()
            return Self.bodies(origin) - before
        }
        #expect(try await bodiesForTwoPlays(cacheDir: workspace.cacheDirectory + "/plain", rule: nil) == 2)
        #expect(try await bodiesForTwoPlays(cacheDir: workspace.cacheDirectory + "/ruled", rule: [Self.signing]) == 2)
        // The preset names the same parameters.
        #expect(try await bodiesForTwoPlays(cacheDir: workspace.cacheDirectory + "/preset", rule: ["signed-cdn"]) == 2)

        let listed = try await CLI.run(["ls"], cacheDir: workspace.cacheDirectory + "/ruled")
        #expect(listed.output.contains("key \(origin.url("ep.mp3"))\n"), "\(listed.output)")
    }

    /// `get` keeps to the rule stored in the cache directory too, and a rule for another host
    /// changes nothing.
    @Test func getKeepsToTheRuleOfItsHost() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 1_000_000, seed: 701)
        try workspace.write(data, as: "ep.mp3")
        let origin = try await PythonOrigin(directory: workspace.originDirectory)
        defer { origin.stop() }

        func bodiesForTwoGets(cacheDir: String, rule: String) async throws -> Int {
            let set = try await CLI.run(["config", "--key-ignore-query", rule], cacheDir: cacheDir)
            #expect(set.status == 0, "\(set.stderr)")
            let before = Self.bodies(origin)
            for token in 1...2 {
                let output = workspace.output("ep-\(UUID().uuidString)")
                let got = try await CLI.run(
                    ["get", origin.url(Self.signed("ep.mp3", token: token)), "-o", output],
                    cacheDir: cacheDir
                )
                #expect(got.status == 0 && workspace.read(output) == data, "\(got.stderr)")
            }
            return Self.bodies(origin) - before
        }
        let thisHost = try await bodiesForTwoGets(
            cacheDir: workspace.cacheDirectory + "/a",
            rule: "127.0.0.1=Signature,Expires"
        )
        // One body, and one check of the second token's first bytes.
        #expect(thisHost == 2)
        let otherHost = try await bodiesForTwoGets(
            cacheDir: workspace.cacheDirectory + "/b",
            rule: "cdn.example.com=Signature,Expires"
        )
        #expect(otherHost == 2)
    }

    /// An expired token's 403 reaches the player as it came, is not stored, and the next play
    /// with a good token reads the cached bytes; every request goes out with the player's URL.
    @Test func anExpiredTokenIsPassedOnAndTheCachedBytesStay() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let fields: [[String]] = [
            ["Cache-Control", "no-cache"], ["ETag", "\"ep1\""], ["Content-Type", "audio/mpeg"],
        ]
        let origin = try await ScriptedOrigin(
            [
                "/ep.mp3?Signature=good1": ["status": 200, "headers": fields],
                "/ep.mp3?Signature=old": [
                    "status": 403, "headers": [["Content-Type", "text/plain"]], "text": "expired\n",
                ],
                "/ep.mp3?Signature=good2": ["status": 200, "headers": fields],
            ],
            in: workspace
        )
        let set = try await CLI.run(["config", "--key-ignore-query", "Signature"], cacheDir: workspace.cacheDirectory)
        #expect(set.status == 0, "\(set.stderr)")
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let body = ScriptedOrigin.body(size: 20_000)

        let first = try await Curl.fetch(proxy.url(origin.url("ep.mp3?Signature=good1")))
        #expect(first.status == 200 && [UInt8](first.body) == body)
        let expired = try await Curl.fetch(proxy.url(origin.url("ep.mp3?Signature=old")))
        #expect(expired.status == 403, "the expired token got \(expired.status)")
        let second = try await Curl.fetch(proxy.url(origin.url("ep.mp3?Signature=good2")))
        #expect(second.status == 200 && [UInt8](second.body) == body)
        try await proxy.stop()

        // The second good play cost one check of its bytes (a file this small, whole), asked with
        // its own token.
        let asked = try await origin.requests("ep.mp3?Signature=good2")
        #expect(asked.count == 1, "the origin was asked \(asked.count) times with the newest URL")
        #expect(try await origin.requests("ep.mp3?Signature=old").count >= 1)
        let listed = try await CLI.run(["ls", "--json"], cacheDir: workspace.cacheDirectory)
        #expect(!listed.output.contains("expired"))
        #expect(listed.output.contains("\"cachedBytes\" : 20000"), "\(listed.output)")
    }

    /// An offline asset is known by its key: a download of the same stream behind a new token
    /// reports the asset it already has and fetches no segment.
    @Test func aReSignedDownloadIsTheSameAsset() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let playlist = try setup.writeTwoSegmentShow(seed: 710)
        let set = try await CLI.run(
            ["config", "--key-ignore-query", "signed-cdn"],
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(set.status == 0, "\(set.stderr)")

        let first = try await setup.download(Self.signed("show/index.m3u8", token: 1))
        #expect(first.status == 0, "\(first.stderr)")
        let before = try await setup.origin.stats()
        let second = try await setup.download(Self.signed("show/index.m3u8", token: 2))
        #expect(second.status == 0, "\(second.stderr)")
        let after = try await setup.origin.stats()
        let firstID = first.output.split(separator: "\n").first
        #expect(firstID != nil && second.output.split(separator: "\n").first == firstID, "\(second.output)")
        // No segment again; the playlist's bytes once, to prove them for the new token.
        #expect(
            after.bodyBytes - before.bodyBytes <= Int64(playlist.utf8.count),
            "the second download fetched \(after.bodyBytes - before.bodyBytes) bytes"
        )
        #expect(try await setup.assets().count == 1)
    }

    /// An app's engine with `CacheKeyRules`: two tokens through the in-app server and two
    /// through the resource loader cost the origin one body each way; without rules, two.
    @Test(arguments: [true, false])
    func theLibrarysRulesHoldForTheInAppServerAndTheResourceLoader(withRules: Bool) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 1_500_000, seed: 720)
        try workspace.write(data, as: "ep.mp3")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let client = HTTPOriginClient()
        var configuration = CacheConfiguration()
        if withRules { configuration.keyRules = try CacheKeyRules(parsing: [Self.signing]) }
        let engine = try CacheEngine(
            directory: CacheDirectory(path: workspace.cacheDirectory),
            origin: client,
            configuration: configuration
        )
        let server = InAppServer(engine: engine)
        _ = try await server.start()

        var before = try await origin.stats().bodyBytes
        for token in 1...2 {
            let url = try await server.url(for: URL(string: origin.url(Self.signed("ep.mp3", token: token)))!)
            let reply = try await Curl.fetch(url.absoluteString)
            #expect(reply.status == 200 && TestData.mismatch([UInt8](reply.body), data) == nil)
        }
        let throughServer = try await origin.stats().bodyBytes - before

        before = try await origin.stats().bodyBytes
        let simulator = AVPlayerSimulator(loader: ResourceLoaderEngine(engine: engine))
        for token in 3...4 {
            let url = URL(string: origin.url(Self.signed("ep.mp3", token: token)))!
            let request = try await simulator.load(url, data: (0, nil))
            #expect(TestData.mismatch(request.received, data) == nil)
        }
        let throughLoader = try await origin.stats().bodyBytes - before
        await server.stop()
        await engine.shutdown()
        try await client.shutdown()

        // With rules, a new token costs a check of its first 64 KiB, not the file.
        let size = Int64(data.count)
        let check: Int64 = 64 << 10
        #expect(
            withRules ? throughServer <= size + check : throughServer == 2 * size,
            "the in-app server's two plays cost \(throughServer) bytes"
        )
        #expect(
            withRules ? throughLoader <= 2 * check : throughLoader == 2 * size,
            "the loader's two plays cost \(throughLoader) bytes"
        )
    }

    /// An app that gives fresh URLs: a fetch refused for an expired token is sent again once
    /// with the app's URL for the key, and the reader gets its bytes; without the hook, the 403.
    @Test(arguments: [true, false])
    func anExpiredTokenIsReplacedByTheAppsFreshURL(refreshes: Bool) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let fields: [[String]] = [["ETag", "\"ep1\""], ["Content-Type", "audio/mpeg"]]
        let origin = try await ScriptedOrigin(
            [
                "/ep.mp3?t=old": ["status": 403, "headers": [["Content-Type", "text/plain"]], "text": "expired\n"],
                "/ep.mp3?t=new": ["status": 200, "headers": fields],
            ],
            in: workspace
        )
        let asked = Locked<[String]>([])
        let client = HTTPOriginClient()
        var configuration = CacheConfiguration()
        configuration.keyRules = try CacheKeyRules(parsing: ["t"])
        if refreshes {
            configuration.refreshURL = { key, refused in
                asked.value += [key]
                return URL(string: refused.absoluteString.replacingOccurrences(of: "t=old", with: "t=new"))
            }
        }
        let engine = try CacheEngine(
            directory: CacheDirectory(path: workspace.cacheDirectory),
            origin: client,
            configuration: configuration
        )
        var bytes: [UInt8] = []
        var failure: StreamCacheError?
        do {
            for try await chunk in try await engine.read(URL(string: origin.url("ep.mp3?t=old"))!) { bytes += chunk }
        } catch let error as StreamCacheError {
            failure = error
        }
        await engine.shutdown()
        try await client.shutdown()
        if refreshes {
            #expect(failure == nil && bytes == ScriptedOrigin.body(size: 20_000), "\(String(describing: failure))")
            #expect(asked.value == [origin.url("ep.mp3")], "the app was asked \(asked.value)")
            #expect(try await origin.requests("ep.mp3?t=new").contains { $0.bodyBytes > 0 })
        } else {
            #expect(failure?.status == 403, "\(String(describing: failure))")
        }
    }

    /// A rule that makes two different files one key: the origin's other length and validator
    /// make the second a new version, never a mix of the two files' bytes.
    @Test func twoFilesUnderOneKeyAreVersionsNeverAMix() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let first = String(repeating: "A", count: 20_000)
        let second = String(repeating: "B", count: 30_000)
        let origin = try await ScriptedOrigin(
            [
                "/f.mp3?v=1": [
                    "status": 200, "headers": [["ETag", "\"one\""], ["Content-Type", "audio/mpeg"]], "text": first,
                ],
                "/f.mp3?v=2": [
                    "status": 200, "headers": [["ETag", "\"two\""], ["Content-Type", "audio/mpeg"]], "text": second,
                ],
            ],
            in: workspace
        )
        let set = try await CLI.run(["config", "--key-ignore-query", "v"], cacheDir: workspace.cacheDirectory)
        #expect(set.status == 0, "\(set.stderr)")
        // Part of the first file is cached, then the whole of the second is asked for.
        let part = try await CLI.run(
            ["get", origin.url("f.mp3?v=1"), "-r", "0-9999", "-o", workspace.output("part")],
            cacheDir: workspace.cacheDirectory
        )
        #expect(part.status == 0 && workspace.read(workspace.output("part")) == Array(first.utf8.prefix(10_000)))
        let whole = try await CLI.run(
            ["get", origin.url("f.mp3?v=2"), "-o", workspace.output("whole")],
            cacheDir: workspace.cacheDirectory
        )
        #expect(whole.status == 0, "\(whole.stderr)")
        #expect(workspace.read(workspace.output("whole")) == Array(second.utf8), "the two files' bytes were mixed")
    }

    /// Bad rules get one line and the usage status, and nothing is stored.
    @Test(arguments: [
        "", "=", "a,,b", "https://cdn.example.com=token", "cdn.example.com:443=token", "*", "signed-nope",
    ])
    func aBadRuleIsRefusedAndNothingStored(rule: String) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let result = try await CLI.run(["config", "--key-ignore-query", rule], cacheDir: workspace.cacheDirectory)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: workspace.cacheDirectory + "/settings.json"))
    }

    /// A host no URL can carry, in any setting that names hosts, is refused: kept, it would be a
    /// rule that never matches.
    @Test(arguments: ["exämple.com", "cdn.example.com:443", "https://cdn.example.com", "a b"])
    func aHostNoURLCarriesIsRefusedInEverySetting(host: String) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        for arguments in [["--ignore-no-store", host], ["--key-ignore-query", host + "=token"]] {
            let result = try await CLI.run(["config"] + arguments, cacheDir: workspace.cacheDirectory)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("not a host name") || result.stderr.contains("without scheme or port"))
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: workspace.cacheDirectory + "/settings.json"))
        }
        // The internationalized name in the form URLs carry is kept.
        let kept = try await CLI.run(
            ["config", "--ignore-no-store", "xn--exmple-cua.com"],
            cacheDir: workspace.cacheDirectory
        )
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(kept.output.contains("ignore-no-store xn--exmple-cua.com"))
    }
}
