import Foundation
import StreamCacheTesting
import Testing

/// Several processes on one cache directory, as users run them (two `get`s, `serve` and `get`,
/// two `serve`s), against the test origin at 2 MB/s: every output right, and the origin sends
/// each byte once.
@Suite(.timeLimit(.minutes(8))) struct SharedCacheTests {
    static let size = 6_000_000
    /// What a second process may cost on top of the file: one chunk of a request in flight.
    static let slack = Int64(Double(size) * 0.01) + 256 << 10

    @Test func twoGetsOnOneDirectoryFetchEachByteOnce() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: Self.size, seed: 901)
        try workspace.write(data, as: "ep.mp3")
        let origin = try await OriginProcess(directory: workspace.originDirectory, arguments: ["--rate", "2M"])
        let url = origin.url("ep.mp3")

        async let first = CLI.run(["get", url, "-o", workspace.output("a")], cacheDir: workspace.cacheDirectory)
        try await Task.sleep(for: .milliseconds(300))
        let second = try await CLI.run(["get", url, "-o", workspace.output("b")], cacheDir: workspace.cacheDirectory)
        let earlier = try await first

        #expect(earlier.status == 0 && second.status == 0, "\(earlier.stderr) \(second.stderr)")
        #expect(TestData.mismatch(workspace.read(workspace.output("a")) ?? [], data) == nil)
        #expect(TestData.mismatch(workspace.read(workspace.output("b")) ?? [], data) == nil)
        let stats = try await origin.stats()
        #expect(
            stats.bodyBytes <= Int64(Self.size) + Self.slack,
            "the origin sent \(stats.bodyBytes) bytes for a \(Self.size)-byte file (\(stats.duplicateBytes) twice)"
        )
        try await origin.stop()
    }

    @Test func serveAndGetOnOneDirectoryFetchEachByteOnce() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: Self.size, seed: 902)
        try workspace.write(data, as: "ep.mp3")
        let origin = try await OriginProcess(directory: workspace.originDirectory, arguments: ["--rate", "2M"])
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let url = origin.url("ep.mp3")

        async let played = Curl.fetch(proxy.url(url))
        try await Task.sleep(for: .milliseconds(300))
        let got = try await CLI.run(["get", url, "-o", workspace.output("b")], cacheDir: workspace.cacheDirectory)

        #expect(got.status == 0, "\(got.stderr)")
        #expect(TestData.mismatch([UInt8](try await played.body), data) == nil, "the player got wrong bytes")
        #expect(TestData.mismatch(workspace.read(workspace.output("b")) ?? [], data) == nil)
        let stats = try await origin.stats()
        #expect(stats.bodyBytes <= Int64(Self.size) + Self.slack, "the origin sent \(stats.bodyBytes) bytes")
        try await proxy.stop()
        try await origin.stop()
    }

    /// A resource shorter than a first fetch, opened by a second process while the first one
    /// receives its body, or at the same moment (before the first has its answer's head): the
    /// index knows its length from the first answer's head on, and a process that opened the
    /// row before learns it from its next claim, so the second process waits for the first
    /// one's bytes and asks the origin at most whether the file changed (a `304`, no body), from
    /// an origin that honours ranges and from one that ignores them. (Opened at once, the second
    /// process used to ask past the end, `bytes=800000-`, and get a `416`.)
    @Test(arguments: [0, 500], [[], ["--fault", "ignore-range"]])
    func aShortResourceIsAskedForOnceWhileASecondProcessOpensIt(
        afterMilliseconds: Int,
        fault: [String]
    ) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 800_000, seed: 904)
        try workspace.write(data, as: "seg.ts")
        let origin = try await OriginProcess(
            directory: workspace.originDirectory,
            arguments: ["--rate", "400K"] + fault
        )
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let url = origin.url("seg.ts")

        async let played = Curl.fetch(proxy.url(url))
        try await Task.sleep(for: .milliseconds(afterMilliseconds))
        let got = try await CLI.run(["get", url, "-o", workspace.output("b")], cacheDir: workspace.cacheDirectory)

        #expect(got.status == 0, "\(got.stderr)")
        #expect(TestData.mismatch([UInt8](try await played.body), data) == nil, "the player got wrong bytes")
        #expect(TestData.mismatch(workspace.read(workspace.output("b")) ?? [], data) == nil)
        let stats = try await origin.settledStats()
        let withBodies = stats.requests.filter { $0.status != 304 }
        #expect(withBodies.count == 1, "requests: \(stats.requests.map { "\($0.range ?? "-") \($0.status)" })")
        #expect(stats.bodyBytes == Int64(data.count), "the origin sent \(stats.bodyBytes) bytes")
        try await proxy.stop()
        try await origin.stop()
    }

    @Test func twoServesOnOneDirectoryFetchEachByteOnce() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: Self.size, seed: 903)
        try workspace.write(data, as: "ep.mp3")
        let origin = try await OriginProcess(directory: workspace.originDirectory, arguments: ["--rate", "2M"])
        let one = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let other = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let url = origin.url("ep.mp3")

        async let first = Curl.fetch(one.url(url))
        try await Task.sleep(for: .milliseconds(300))
        let second = try await Curl.fetch(other.url(url))

        #expect(TestData.mismatch([UInt8](try await first.body), data) == nil, "the first player got wrong bytes")
        #expect(TestData.mismatch([UInt8](second.body), data) == nil, "the second player got wrong bytes")
        let stats = try await origin.stats()
        #expect(stats.bodyBytes <= Int64(Self.size) + Self.slack, "the origin sent \(stats.bodyBytes) bytes")
        try await one.stop()
        try await other.stop()
        try await origin.stop()
    }

    /// Two players on two `serve`s of one cache directory open a new resource at once, one
    /// seeking into it (`Range: bytes=500000-`), from an origin that ignores
    /// `Range`: the second process to claim waits for the first one's answer head rather than
    /// ask too, learns that the origin sends whole bodies and reads the first one's, so the
    /// origin sends the file once. (It asked for the bytes before the first one's claim, and
    /// the origin sent the whole file again.)
    @Test func twoProcessesOpeningARangeIgnoringResourceAtOnceHaveItSentOnce() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 2_000_000, seed: 905)
        try workspace.write(data, as: "ep.mp3")
        let origin = try await OriginProcess(
            directory: workspace.originDirectory,
            // A quarter second before each answer: both requests are out before either head.
            arguments: ["--rate", "2M", "--fault", "ignore-range", "--latency", "250"]
        )
        let one = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let other = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let url = origin.url("ep.mp3")

        async let seeked = Curl.fetch(one.url(url), headers: ["Range: bytes=500000-"])
        // The seeking player claims first; the other comes while its request waits for a head.
        try await Task.sleep(for: .milliseconds(100))
        async let whole = Curl.fetch(other.url(url))
        let (seekedBody, wholeBody) = try await ([UInt8](seeked.body), [UInt8](whole.body))

        #expect(TestData.mismatch(seekedBody, Array(data[500_000...])) == nil, "the seeking player got wrong bytes")
        #expect(TestData.mismatch(wholeBody, data) == nil, "the other player got wrong bytes")
        let stats = try await origin.settledStats()
        #expect(
            stats.duplicateBytes == 0,
            "\(stats.duplicateBytes) bytes sent twice: \(stats.requests.map { "\($0.range ?? "-") \($0.bodyBytes)" })"
        )
        try await one.stop()
        try await other.stop()
        try await origin.stop()
    }

    /// Two players of one `serve` opening a new file at once, one seeking past what the first
    /// one's request asks for (1 MiB), from an origin that ignores `Range` and that `serve` met
    /// before (another file's answer said so): the seek waits for the first request's answer, the
    /// whole body, rather than ask too, so the origin sends the file once. (It asked at once,
    /// and the origin sent the 4 MB file twice.)
    @Test func twoPlayersOfOneServeOpeningAFileOfARangeIgnoringOriginHaveItSentOnce() async throws {
        let (data, stats) = try await twoPlayersOfANewServe(
            originArguments: ["--fault", "ignore-range", "--latency", "250"],
            seekingFrom: 3_000_000,
            seed: 906,
            meetingTheOriginFirst: true
        )
        let episode = stats.requests.filter { $0.path.hasSuffix("ep.mp3") }
        #expect(
            episode.map(\.bodyBytes).reduce(0, +) == data.count,
            "the origin sent \(episode.map { "\($0.range ?? "-") \($0.bodyBytes)" }) for a file of \(data.count)"
        )
    }

    /// The same two players on a `serve` that has not met the origin yet (its first file): the
    /// seek waits for the first request's answer head, which says whether the origin honours
    /// `Range`, rather than ask at once, so the origin sends the file once. (It asked at once,
    /// and the origin sent what it pushed before the second answer was cut: the file again, in
    /// part or whole.)
    @Test func twoPlayersOfOneServeOpeningTheFirstFileOfAnOriginHaveItSentOnce() async throws {
        let (data, stats) = try await twoPlayersOfANewServe(
            originArguments: ["--fault", "ignore-range", "--latency", "250"],
            seekingFrom: 3_000_000,
            seed: 908
        )
        #expect(
            stats.bodyBytes == data.count && stats.duplicateBytes == 0,
            "the origin sent \(stats.requests.map { "\($0.range ?? "-") \($0.bodyBytes)" }) for a file of \(data.count)"
        )
    }

    /// Two players of a `serve` that has not met the origin, which honours `Range`: the seek
    /// waits for the first answer's head, which says so, and then reads as with any such origin
    /// (a request of its own, or the first player's fetch if it is near): right bytes, each
    /// sent once, no answer a whole body.
    @Test func aSeekIntoTheFirstFileOfAnOriginThatHonoursRangeGetsItsBytesOnce() async throws {
        let (_, stats) = try await twoPlayersOfANewServe(
            originArguments: ["--rate", "1M", "--latency", "250"],
            seekingFrom: 3_900_000,
            seed: 909
        )
        let described = stats.requests.map { "\($0.range ?? "-") \($0.status) \($0.bodyBytes)" }
        #expect(stats.duplicateBytes == 0, "\(stats.duplicateBytes) bytes sent twice: \(described)")
        // Ranges, and perhaps a `304` to a check of the first answer's freshness; no whole body.
        #expect(stats.requests.allSatisfy { $0.status == 206 || $0.status == 304 }, "answers: \(described)")
    }

    /// A new `serve` in front of a new origin started with `originArguments`, a 4 MB file, a
    /// player reading all of it and, 0.1 s later (while the first request waits for its answer,
    /// the origin's latency being longer), one reading it from `seekingFrom`. Checks both
    /// players' bytes. With `meetingTheOriginFirst`, `serve` reads 100 bytes of another file of
    /// the origin before (the first request's answer has told it what the origin does with a
    /// range).
    ///
    /// - Returns: the file and what the origin sent once every answer ended.
    private func twoPlayersOfANewServe(
        originArguments: [String],
        seekingFrom seek: Int,
        seed: UInt64,
        meetingTheOriginFirst: Bool = false
    ) async throws -> (data: [UInt8], stats: ListeningProcess.Stats) {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 4_000_000, seed: seed)
        try workspace.write(data, as: "ep.mp3")
        if meetingTheOriginFirst { try workspace.write(TestData.bytes(count: 10_000, seed: seed + 1), as: "cover.jpg") }
        let origin = try await OriginProcess(directory: workspace.originDirectory, arguments: originArguments)
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        if meetingTheOriginFirst {
            let cover = try await Curl.fetch(proxy.url(origin.url("cover.jpg")), headers: ["Range: bytes=0-99"])
            #expect(cover.body.count == 100)
        }
        let url = origin.url("ep.mp3")

        async let whole = Curl.fetch(proxy.url(url))
        try await Task.sleep(for: .milliseconds(100))
        async let seeked = Curl.fetch(proxy.url(url), headers: ["Range: bytes=\(seek)-"])
        let (wholeBody, seekedBody) = try await ([UInt8](whole.body), [UInt8](seeked.body))

        #expect(TestData.mismatch(wholeBody, data) == nil, "the first player got wrong bytes")
        #expect(TestData.mismatch(seekedBody, Array(data[seek...])) == nil, "the seeking player got wrong bytes")
        let stats = try await origin.settledStats()
        try await proxy.stop()
        try await origin.stop()
        return (data, stats)
    }

    /// One `serve`'s player reads the first 2 MB of a new 4 MB file from an origin that ignores
    /// `Range` (1 MB/s), and another `serve`'s player reads all of it, starting half a second
    /// later: the second waits for the first one's stream and says so in the index, and the
    /// first reads its body on for it once its own player has its bytes, rather than hold it for
    /// that player and end it. So the origin sends the file once. (It sent 7.25 MB: the first
    /// engine ended its stream after the grace, and the second asked for the rest, which the
    /// origin sent from the first byte.)
    @Test func aStreamAnotherProcessWaitsForReadsOnForIt() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 4_000_000, seed: 908)
        try workspace.write(data, as: "ep.mp3")
        let origin = try await OriginProcess(
            directory: workspace.originDirectory,
            arguments: ["--rate", "1M", "--fault", "ignore-range"]
        )
        let one = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let other = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let url = origin.url("ep.mp3")

        // Both players from one shell, the second half a second after the first: timed by the
        // shell, not by this process's tasks, which a loaded test run has kept waiting for seconds
        // (then the second came after the first's grace, and the bytes were sent twice).
        let players = try await Tool.run(
            "sh",
            [
                "-c",
                "curl -sfg -H 'Range: bytes=0-1999999' -o \"$1\" \"$2\" & first=$!; sleep 0.5; "
                    + "curl -sfg -o \"$3\" \"$4\" && wait $first",
                "players", workspace.output("start"), one.url(url), workspace.output("whole"), other.url(url),
            ]
        )
        #expect(players.status == 0, "a player failed: \(players.stderr)")
        let startBody = workspace.read(workspace.output("start")) ?? []
        let wholeBody = workspace.read(workspace.output("whole")) ?? []

        #expect(TestData.mismatch(startBody, Array(data[..<2_000_000])) == nil, "the first player got wrong bytes")
        #expect(TestData.mismatch(wholeBody, data) == nil, "the second player got wrong bytes")
        let stats = try await origin.settledStats()
        #expect(
            stats.bodyBytes == Int64(data.count),
            "the origin sent \(stats.bodyBytes) bytes for a file of \(data.count): \(stats.requests.map { "\($0.range ?? "-") \($0.bodyBytes)" })"
        )
        try await one.stop()
        try await other.stop()
        try await origin.stop()
    }

    /// Two offline downloads of one HLS asset (four segments at a time each, into libraries of
    /// their own) and a player streaming it through `serve`, all at once on one cache directory:
    /// every segment comes from the origin once. An engine's claims on the segments it fetched
    /// at once were one claim (keyed by its fetch number, which counts per resource), so the
    /// other processes fetched a third to a half of the asset again.
    @Test func twoDownloadsAndAPlayerOfOneAssetAtOnceFetchEachByteOnce() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        try await TestStreams.make(.ts, in: workspace.originDirectory, seconds: 16, videoBitrate: "1M")
        // 1 MB/s per connection: a segment takes a quarter second, so the fetches overlap.
        let origin = try await OriginProcess(directory: workspace.originDirectory, arguments: ["--rate", "1M"])
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let playlist = origin.url("ts/index.m3u8")

        async let first = CLI.run(
            ["hls", "download", playlist, "--library", workspace.output("one")],
            cacheDir: workspace.cacheDirectory
        )
        async let second = CLI.run(
            ["hls", "download", playlist, "--library", workspace.output("two")],
            cacheDir: workspace.cacheDirectory
        )
        let (played, warnings) = try await TestStreams.framesAndWarnings(proxy.url(playlist))
        let (one, two) = try await (first, second)

        #expect(one.status == 0 && two.status == 0, "\(one.stderr) \(two.stderr)")
        let original = try await TestStreams.frames(workspace.originDirectory + "/ts/index.m3u8")
        let same = played == original
        #expect(same, "the player decoded \(played.count) frames of \(original.count); ffmpeg: \(warnings)")
        let stats = try await origin.settledStats()
        let twice = stats.requests.filter { $0.bodyBytes > 2 }.map(\.path).sorted()
        #expect(
            stats.duplicateBytes == 0,
            "\(stats.duplicateBytes) bytes sent twice; requests with bodies: \(twice)"
        )
        try await proxy.stop()
        try await origin.stop()
    }

    struct Moment: CustomTestStringConvertible, Sendable {
        let seed: UInt64
        var testDescription: String { "seed \(seed)" }
    }

    /// The first `get` is killed with SIGKILL at a random moment; the second, which waited for its
    /// bytes, takes over from what is durable and ends with every byte right.
    @Test(arguments: (1...3).map { Moment(seed: $0) })
    func aSecondProcessFinishesWhenTheFirstIsKilled(moment: Moment) async throws {
        var random = SeededRandom(seed: moment.seed)
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 4_000_000, seed: 910 + moment.seed)
        try workspace.write(data, as: "ep.mp3")
        let origin = try await OriginProcess(directory: workspace.originDirectory, arguments: ["--rate", "2M"])
        let url = origin.url("ep.mp3")

        let (victim, _, _) = try CLI.start(
            ["get", url, "-o", workspace.output("a")],
            cacheDir: workspace.cacheDirectory
        )
        try await Task.sleep(for: .milliseconds(300))
        async let survivor = CLI.run(["get", url, "-o", workspace.output("b")], cacheDir: workspace.cacheDirectory)
        let delay = Int.random(in: 200...1500, using: &random)
        try await Task.sleep(for: .milliseconds(delay))
        if victim.isRunning { kill(victim.processIdentifier, SIGKILL) }
        let result = try await survivor

        #expect(result.status == 0, "killed after \(delay) ms: \(result.stderr)")
        #expect(
            TestData.mismatch(workspace.read(workspace.output("b")) ?? [], data) == nil,
            "wrong bytes after the first process was killed at \(delay) ms"
        )
        let replay = try await CLI.run(["get", url, "-o", workspace.output("c")], cacheDir: workspace.cacheDirectory)
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(
            TestData.mismatch(workspace.read(workspace.output("c")) ?? [], data) == nil,
            "the cache kept a wrong byte"
        )
        try await origin.stop()
    }
}
