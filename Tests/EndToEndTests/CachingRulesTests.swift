import Foundation
import StreamCache
import StreamCacheHTTP
import StreamCacheResourceLoader
import StreamCacheResourceLoaderTesting
import StreamCacheTesting
import Testing

/// RFC 9111's rules for a private cache, one scripted answer per row, played twice through
/// `serve` and twice through nginx `proxy_cache` (`proxy_cache_revalidate on`): what the second
/// play cost the origin, what the player got. StreamCache must do what the RFC says on every row,
/// and cost no more than nginx wherever nginx follows the RFC.
@Suite(.timeLimit(.minutes(4))) struct CachingRulesTests {
    /// What a second play of a response costs the origin.
    enum Cost: Int, Comparable, CustomStringConvertible {
        /// Nothing: the stored response is reused.
        case none
        /// A conditional request answered `304`: no body.
        case conditional
        /// The body again.
        case body

        static func < (a: Cost, b: Cost) -> Bool { a.rawValue < b.rawValue }
        var description: String { ["no request", "a 304", "the body again"][rawValue] }
    }

    struct Rule: Sendable, CustomTestStringConvertible {
        let name: String
        let fields: [[String]]
        /// What the RFC lets a private cache do on the second play, at best.
        let cost: Cost
        var testDescription: String { name }
    }

    static let longAgo = "Tue, 14 Nov 2023 22:13:21 GMT"
    static let past = "Thu, 01 Jan 2015 00:00:00 GMT"
    static let rules: [Rule] = [
        Rule(name: "max-age=3600", fields: [["Cache-Control", "max-age=3600"]], cost: .none),
        Rule(name: "Expires ahead", fields: [["Expires", "Fri, 01 Jan 2100 00:00:00 GMT"]], cost: .none),
        Rule(name: "Last-Modified only (heuristic)", fields: [["Last-Modified", longAgo]], cost: .none),
        Rule(name: "no-store", fields: [["Cache-Control", "no-store"], ["ETag", "\"n\""]], cost: .body),
        Rule(name: "no-cache", fields: [["Cache-Control", "no-cache"], ["ETag", "\"c\""]], cost: .conditional),
        Rule(name: "max-age=0", fields: [["Cache-Control", "max-age=0"], ["ETag", "\"z\""]], cost: .conditional),
        Rule(name: "max-age=-1", fields: [["Cache-Control", "max-age=-1"], ["ETag", "\"m\""]], cost: .conditional),
        Rule(name: "Expires in the past", fields: [["Expires", past], ["ETag", "\"e\""]], cost: .conditional),
        Rule(name: "Expires: 0", fields: [["Expires", "0"], ["ETag", "\"0\""]], cost: .conditional),
        Rule(
            name: "Age older than max-age",
            fields: [["Cache-Control", "max-age=60"], ["Age", "120"], ["ETag", "\"a\""]],
            cost: .conditional
        ),
        Rule(
            name: "must-revalidate, stale",
            fields: [["Cache-Control", "max-age=0, must-revalidate"], ["ETag", "\"r\""]],
            cost: .conditional
        ),
        Rule(
            name: "quoted and unknown directives",
            fields: [["Cache-Control", "foo=\"a,b\", max-age=3600,, bar"]],
            cost: .none
        ),
        Rule(name: "Vary: *", fields: [["Vary", "*"], ["ETag", "\"v\""]], cost: .body),
    ]

    @Test(.enabled(if: LinuxTools.nginx, "nginx is not at /usr/sbin/nginx"))
    func eachRuleAsTheRFCSaysAndNoCostlierThanNginx() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        var script: [String: Any] = [:]
        for (index, rule) in Self.rules.enumerated() {
            script["/r\(index)"] = ["status": 200, "headers": rule.fields + [["Content-Type", "audio/mpeg"]]]
        }
        let ours = try await ScriptedOrigin(script, in: workspace)
        let theirs = try await ScriptedOrigin(script, in: workspace)
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let nginx = try await NginxProcess(cachingProxyOf: theirs.base)

        var report: [String] = []
        for (index, rule) in Self.rules.enumerated() {
            let path = "r\(index)"
            let cost = try await secondPlayCost(path, origin: ours) { proxy.url(ours.url(path)) }
            let peer = try await secondPlayCost(path, origin: theirs) { nginx.url(path) }
            report.append("\(rule.name): streamcache \(cost), nginx \(peer)")
            #expect(cost == rule.cost, "\(rule.name): the second play cost \(cost), the RFC allows \(rule.cost)")
            // Where nginx does not reuse what it must not, StreamCache costs no more.
            if peer >= rule.cost {
                #expect(cost <= peer, "\(rule.name): streamcache \(cost), nginx \(peer)")
            }
        }
        print(report.joined(separator: "\n"))
        try await proxy.stop()
    }

    /// Plays `url` twice with curl, each answer a 200, then says what the second play cost the origin.
    func secondPlayCost(_ path: String, origin: ScriptedOrigin, url: @escaping () -> String) async throws -> Cost {
        try await secondPlayCost(path, origin: origin) {
            let reply = try await Curl.fetch(url())
            #expect(reply.status == 200, "\(path): \(reply.status)")
            return [UInt8](reply.body)
        }
    }

    /// A response that varies on a request field is reused only for a request with the same
    /// value of it (RFC 9111 §4.1).
    @Test func varyOnARequestFieldReusesOnlyTheSameValue() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await ScriptedOrigin(
            ["/v": ["status": 200, "headers": [["Cache-Control", "max-age=3600"], ["Vary", "Accept-Language"]]]],
            in: workspace
        )
        func get(_ language: String) async throws -> Int {
            let before = try await origin.requests("v").filter { $0.bodyBytes > 0 }.count
            let output = workspace.output("v-\(UUID().uuidString)")
            let result = try await CLI.run(
                ["get", origin.url("v"), "-H", "Accept-Language: \(language)", "-o", output],
                cacheDir: workspace.cacheDirectory
            )
            #expect(
                result.status == 0 && workspace.read(output) == ScriptedOrigin.body(size: 20_000),
                "\(result.stderr)"
            )
            return try await origin.requests("v").filter { $0.bodyBytes > 0 }.count - before
        }
        #expect(try await get("en") > 0)
        #expect(try await get("en") == 0, "the same value: reused")
        #expect(try await get("de") > 0, "another value: fetched")
        #expect(try await get("de") == 0)
    }

    /// Reads `path` twice with `get` (curl, or the `get` command), each time checking every byte,
    /// then says what the second time cost the origin.
    func secondPlayCost(
        _ path: String,
        origin: ScriptedOrigin,
        get: () async throws -> [UInt8]
    ) async throws -> Cost {
        let expected = ScriptedOrigin.body(size: 20_000)
        #expect(try await get() == expected, "\(path): first run")
        let before = try await origin.requests(path).count
        #expect(try await get() == expected, "\(path): second run")
        let after = try await origin.requests(path).dropFirst(before)
        if after.isEmpty { return .none }
        return after.contains { $0.bodyBytes > 0 } ? .body : .conditional
    }

    @Test func storedFieldsAgeConditionalRequestsAndErrorAnswersReachThePlayer() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await ScriptedOrigin(
            [
                "/fields": [
                    "status": 200,
                    "headers": [
                        ["Cache-Control", "max-age=3600"], ["ETag", "\"f1\""], ["Last-Modified", Self.longAgo],
                        ["Content-Disposition", "attachment; filename=\"ep.mp3\""], ["Content-Language", "en"],
                        ["Link", "<https://example.com/>; rel=\"canonical\""], ["X-Episode", "42"],
                        ["Set-Cookie", "secret=1"],
                    ],
                ],
                "/gone": [
                    "status": 404, "headers": [["Content-Type", "text/plain"], ["X-Why", "moved"]],
                    "body": "not here\n",
                ],
                "/made": ["status": 201, "headers": [["Content-Type", "text/plain"]], "body": "made\n"],
                "/away": ["status": 302, "headers": [["Content-Type", "text/plain"]], "body": "no location\n"],
            ],
            in: workspace
        )
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let url = proxy.url(origin.url("fields"))
        _ = try await Curl.fetch(url)
        try await Task.sleep(for: .milliseconds(1100))
        let cached = try await Curl.fetch(url)
        #expect(
            try await origin.requests("fields").allSatisfy { !$0.conditional },
            "a fresh answer was checked"
        )
        for name in ["content-disposition", "content-language", "link", "x-episode", "etag", "last-modified"] {
            #expect(cached.headers[name] != nil, "\(name) is not sent from the cache: \(cached.headers)")
        }
        #expect(cached.headers["cache-control"] == "max-age=3600")
        // To the one user of this private cache, from memory (StoredFieldReplayTests).
        #expect(cached.headers["set-cookie"] == "secret=1", "the cookie was not sent again")
        #expect((Int(cached.headers["age"] ?? "") ?? 0) >= 1, "Age: \(cached.headers["age"] ?? "none")")

        // The player's own conditional requests against the cached validators.
        let same = try await Curl.fetch(url, headers: ["If-None-Match: \"f1\""])
        #expect(same.status == 304 && same.body.isEmpty)
        let weak = try await Curl.fetch(url, headers: ["If-None-Match: W/\"f1\""])
        #expect(weak.status == 304)
        let other = try await Curl.fetch(url, headers: ["If-None-Match: \"f0\""])
        #expect(other.status == 200 && other.body.count == 20_000)
        let since = try await Curl.fetch(url, headers: ["If-Modified-Since: Wed, 15 Nov 2023 00:00:00 GMT"])
        #expect(since.status == 304)

        // Other answers reach the player as they came.
        for (path, status, body) in [
            ("gone", 404, "not here\n"), ("made", 201, "made\n"), ("away", 302, "no location\n"),
        ] {
            let reply = try await Curl.fetch(proxy.url(origin.url(path)))
            #expect(reply.status == status, "\(path): \(reply.status)")
            #expect(
                String(decoding: reply.body, as: UTF8.self) == body,
                "\(path): \(String(decoding: reply.body, as: UTF8.self))"
            )
        }
        let gone = try await Curl.fetch(proxy.url(origin.url("gone")))
        #expect(gone.headers["x-why"] == "moved")
        try await proxy.stop()
    }
}

/// `Tests/Fixtures/scripted_origin.py`: answers each path as a script says.
final class ScriptedOrigin: Sendable {
    let process: ChildProcess
    let base: String
    /// The script file, read again for every request.
    let scriptFile: String

    struct Request: Decodable {
        let path: String
        let method: String
        /// How many bytes the request's body held.
        let sentBytes: Int
        let status: Int
        let range: String?
        let conditional: Bool
        let bodyBytes: Int64
        /// The request's fields, name and value.
        let fields: [[String]]

        /// The values of field `name` the request had.
        func values(_ name: String) -> [String] {
            fields.filter { $0.first?.lowercased() == name.lowercased() }.compactMap { $0.last }
        }
    }

    init(_ script: [String: Any], in workspace: Workspace) async throws {
        let file = workspace.outputDirectory + "/script-\(UUID().uuidString).json"
        scriptFile = file
        try JSONSerialization.data(withJSONObject: script).write(to: URL(fileURLWithPath: file))
        let program = Fixtures.path("scripted_origin.py")
        let (process, line) = try await Self.start(["python3", "-u", program, file])
        self.process = process
        guard line.hasPrefix("listening on ") else {
            process.terminate()
            throw POSIXError(.EIO)
        }
        base = String(line.dropFirst("listening on ".count)).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func start(_ arguments: [String]) async throws -> (ChildProcess, String) {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let (out, _) = try process.startCapturing()
        return (process, try await out.firstLine())
    }

    func url(_ path: String) -> String { base + "/" + path }

    /// Replaces what the origin answers from its next request on.
    func rescript(_ script: [String: Any]) throws {
        try JSONSerialization.data(withJSONObject: script).write(to: URL(fileURLWithPath: scriptFile), options: .atomic)
    }

    /// The requests for `/path` so far.
    func requests(_ path: String) async throws -> [Request] {
        try await allRequests().filter { $0.path == "/" + path }
    }

    /// Every request so far, of every path.
    func allRequests() async throws -> [Request] {
        let url = URL(string: base + "/_stats")!
        let data = try await onOwnThread { try Data(contentsOf: url) }
        struct Stats: Decodable { let requests: [Request] }
        return try JSONDecoder().decode(Stats.self, from: data).requests
    }

    /// The bytes of endless bodies sent so far.
    func endlessBytes() async throws -> Int64 {
        let url = URL(string: base + "/_stats")!
        let data = try await onOwnThread { try Data(contentsOf: url) }
        struct Stats: Decodable { let endlessBytes: Int64 }
        return try JSONDecoder().decode(Stats.self, from: data).endlessBytes
    }

    /// Stops the origin (SIGKILL) and waits until it is gone.
    func stop() async throws {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        let process = process
        _ = try await onOwnThread {
            for _ in 0..<500 where process.isRunning { usleep(10_000) }
            return !process.isRunning
        }
    }

    /// The body the script serves for `size` bytes.
    static func body(size: Int) -> [UInt8] { (0..<size).map { UInt8($0 % 251) } }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

/// A podcast downloaded yesterday plays on a plane: stale copies are served with the origin
/// stopped, through `serve` and through the resource loader; with the origin running, their
/// check costs one request and no body.
@Suite(.timeLimit(.minutes(3))) struct OfflineStaleTests {
    @Test func aStaleEpisodePlaysWithTheOriginStopped() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let size = 300_000
        let origin = try await ScriptedOrigin(
            [
                "/ep.mp3": [
                    "status": 200, "size": size,
                    "headers": [["Cache-Control", "max-age=0"], ["ETag", "\"e1\""], ["Content-Type", "audio/mpeg"]],
                ],
                "/strict.mp3": [
                    "status": 200, "size": size,
                    "headers": [["Cache-Control", "max-age=0, must-revalidate"], ["ETag", "\"s1\""]],
                ],
            ],
            in: workspace
        )
        let expected = ScriptedOrigin.body(size: size)
        let log = workspace.output("access.log")
        let proxy = try await ListeningProcess(["serve", "--access-log", log], cacheDir: workspace.cacheDirectory)
        for path in ["ep.mp3", "strict.mp3"] {
            #expect([UInt8](try await Curl.fetch(proxy.url(origin.url(path))).body) == expected)
        }
        let before = try await origin.requests("ep.mp3").count
        #expect([UInt8](try await Curl.fetch(proxy.url(origin.url("ep.mp3"))).body) == expected)
        let check = try await origin.requests("ep.mp3").dropFirst(before)
        #expect(check.count == 1 && check.allSatisfy { $0.status == 304 && $0.bodyBytes == 0 }, "\(Array(check))")

        // The resource loader, on a cache of its own, plays the episode once with the origin up.
        let loaderCache = CacheDirectory(path: workspace.outputDirectory + "/loader-cache")
        let client = HTTPOriginClient()
        let engine = try CacheEngine(directory: loaderCache, origin: client)
        let simulator = AVPlayerSimulator(loader: ResourceLoaderEngine(engine: engine))
        let url = URL(string: origin.url("ep.mp3"))!
        _ = try await simulator.openAsset(url)
        #expect(try await simulator.load(url, data: (0, nil)).received == expected)

        try await origin.stop()
        let offline = try await Curl.fetch(proxy.url(origin.url("ep.mp3")))
        #expect(offline.status == 200 && [UInt8](offline.body) == expected, "served \(offline.status) offline")
        let strict = try await Curl.fetch(proxy.url(origin.url("strict.mp3")))
        #expect(strict.status >= 500, "a must-revalidate copy was served unchecked: \(strict.status)")
        try await proxy.stop()
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.contains { $0.contains("/ep.mp3") && $0.hasSuffix(" stale") }, "\(lines.suffix(3))")

        let replay = try await simulator.load(url, data: (0, nil))
        #expect(
            replay.error == nil && replay.received == expected,
            "the loader offline: \(String(describing: replay.error))"
        )
        await engine.shutdown()
        try await client.shutdown()
    }
}
