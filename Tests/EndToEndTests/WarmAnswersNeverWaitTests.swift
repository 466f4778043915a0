import Foundation
import StreamCacheTesting
import Testing

/// Warm answers come at once, whatever another connection of the same proxy waits on: a name its
/// resolver takes 5 s to answer, writes a slow disk holds for 2 s each. Measured beside the same
/// proxy with nothing slow in flight, so that a busy test run slows both alike; a warm answer that
/// waited on the slow work would take seconds.
@Suite(.timeLimit(.minutes(3)))
struct WarmAnswersNeverWaitTests {
    /// What `warm_latency.py` measured, in milliseconds.
    struct Latency: Decodable, CustomStringConvertible {
        let count: Int
        let p50: Double
        let p99: Double
        let max: Double
        var description: String { "\(count) answers, p50 \(p50) ms, p99 \(p99) ms, max \(max) ms" }
    }

    /// 4 KiB ranges of `url` asked one after another on one connection for `seconds`.
    static func measure(_ url: String, seconds: Int, within span: Int = 1 << 20) async throws -> Latency {
        let result = try await Tool.run(
            "python3",
            [Fixtures.path("warm_latency.py"), url, String(seconds), "4096", String(span)]
        )
        try #require(result.status == 0, "\(result.stderr)")
        return try JSONDecoder().decode(Latency.self, from: result.stdout)
    }

    /// A proxy with a resolver that takes `resolving` seconds for every name, and a 1 MiB file it
    /// has cached whole.
    struct Setup {
        let workspace = Workspace()
        let resolver = ChildProcess()
        let origin: OriginProcess
        let proxy: ListeningProcess
        let warm: String

        init(resolving seconds: Int) async throws {
            // A resolver of its own on a loopback address of its own, which only the proxy's mount
            // namespace uses.
            let address = "127.53.\(Int.random(in: 1...254)).\(Int.random(in: 1...254))"
            resolver.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            resolver.arguments = [
                "python3", Fixtures.path("slow_resolver.py"), address, "\(seconds)",
            ]
            let (out, _) = try resolver.startCapturing()
            try #require(try await out.firstLine().hasPrefix("listening"))
            let configuration = workspace.outputDirectory + "/resolv.conf"
            try "nameserver \(address)\noptions timeout:30 attempts:1\n".write(
                toFile: configuration,
                atomically: true,
                encoding: .utf8
            )
            try workspace.write(TestData.bytes(count: 1 << 20, seed: 64), as: "ep.mp3")
            origin = try await OriginProcess(directory: workspace.originDirectory)
            proxy = try await ListeningProcess(
                ["serve"],
                cacheDir: workspace.cacheDirectory,
                launcher: [
                    "/usr/bin/unshare", "-m", "/bin/sh", "-c",
                    "mount --bind \(configuration) /etc/resolv.conf && exec \"$0\" \"$@\"",
                ]
            )
            warm = proxy.url(origin.url("ep.mp3"))
            let whole = try await Curl.fetch(warm)
            try #require(whole.status == 200 && whole.body.count == 1 << 20)
        }

        func remove() {
            resolver.terminate()
            workspace.remove()
        }
    }

    @Test(.enabled(if: Tmpfs.canMount, "a resolver of its own needs a mount namespace (root)"))
    func aWarmAnswerDoesNotWaitOnANameTheResolverTakesFiveSecondsFor() async throws {
        let setup = try await Setup(resolving: 5)
        defer { setup.remove() }
        let alone = try await Self.measure(setup.warm, seconds: 2)

        // Targets on the proxy's own port, by name: whether each names the proxy itself is known
        // only once the resolver answers.
        let started = ContinuousClock.now
        let slow = (0..<4).map { index in
            Task { try await Curl.fetch(setup.proxy.url("http://slow-\(index).test:\(setup.proxy.port)/ep.mp3")) }
        }
        try await Task.sleep(for: .milliseconds(300))
        let beside = try await Self.measure(setup.warm, seconds: 3)
        for task in slow {
            let reply = try await task.value
            // A name that never resolves: the origin cannot be reached (502), or not in time (504).
            #expect(
                [502, 504].contains(reply.status),
                "\(reply.status): \(String(decoding: reply.body, as: UTF8.self))"
            )
        }
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(4_500), "the names took \(waited), not the resolver's 5 s")
        // An answer that waited on the resolver would take its 5 s. The p99 this suite prints when
        // run alone is what bench/README.md records against the 20 ms goal: a full test run's
        // load moves it past any bound drawn from a measurement taken before or after.
        #expect(beside.max < 1_000, "alone: \(alone); beside the names: \(beside)")
        #expect(beside.p99 < 500, "alone: \(alone); beside the names: \(beside)")
    }

    /// Two fetches whose writes the disk holds for 2 s each, past their first MiB: the writer
    /// holds its data file's lock all that while. Warm ranges of another resource, and of the
    /// first MiB of a file being written, come within a quarter of a hold (a second proxy on an
    /// ordinary folder is measured beside them, for the record). A resource new to the cache is fetched and
    /// answered; and once the disk is fast again, both slow bodies arrive whole.
    @Test(.enabled(if: SlowDisk.isAvailable, "a FUSE filesystem needs /dev/fuse, python3-fuse and root"))
    func warmAnswersDoNotWaitOnWritesASlowDiskHolds() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let disk = try await SlowDisk(in: workspace.outputDirectory)
        defer { disk.unmount() }
        let large = 8 << 20
        try workspace.write(TestData.bytes(count: 1 << 20, seed: 70), as: "warm.mp3")
        for (index, name) in ["slow-1.mp4", "slow-2.mp4", "new.mp4"].enumerated() {
            try workspace.write(TestData.bytes(count: large, seed: UInt64(71 + index)), as: name)
        }
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let proxy = try await ListeningProcess(["serve"], cacheDir: disk.path + "/cache")
        let control = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let warm = proxy.url(origin.url("warm.mp3"))
        let controlWarm = control.url(origin.url("warm.mp3"))
        for url in [warm, controlWarm] { try #require(try await Curl.fetch(url).body.count == 1 << 20) }

        try disk.holdWrites(for: 2, from: 1 << 20)
        let slow = ["slow-1.mp4", "slow-2.mp4"].map { name in
            Task { try await Curl.fetch(proxy.url(origin.url(name))) }
        }
        // Both writers are past their first MiB, inside a write the disk holds.
        let deadline = ContinuousClock.now + .seconds(20)
        while workspace.dataFilesIn(disk.path + "/cache").filter({ Self.size(of: $0) > 1 << 20 }).count < 2 {
            try #require(ContinuousClock.now < deadline, "the slow fetches never got past their first MiB")
            try await Task.sleep(for: .milliseconds(100))
        }
        async let besideRun = Self.measure(warm, seconds: 2)
        async let aloneRun = Self.measure(controlWarm, seconds: 2)
        let (beside, alone) = try await (besideRun, aloneRun)
        let written = try await Self.measure(proxy.url(origin.url("slow-1.mp4")), seconds: 2, within: 1 << 20)
        let started = ContinuousClock.now
        let new = try await Curl.fetch(proxy.url(origin.url("new.mp4")), headers: ["Range: bytes=0-4095"])
        let newTook = ContinuousClock.now - started

        // Reads from the FUSE folder go through its Python daemon, whose pace in a busy test run
        // is no peer's (1 to 3.3 times the ordinary folder's p99 measured beside it); an answer
        // that waited on a held write would wait for the rest of it, seconds.
        #expect(beside.p99 < 500, "alone: \(alone); beside the slow writes: \(beside)")
        // Bytes just written to the FUSE folder are read back through its Python daemon, whose
        // pace in a busy test run is no peer's (1 to 4 times a cached file's); an answer that
        // waited on the held write would wait for the rest of it, seconds.
        #expect(written.p99 < 500, "the slow file's first MiB: \(written)")
        #expect(new.status == 206 && new.body == Data(TestData.bytes(count: large, seed: 73).prefix(4096)))
        // Stuck behind the held writes, it got no answer in 20 s.
        #expect(newTook < .seconds(10), "a new resource took \(newTook) beside the slow writes")

        try disk.holdWrites(for: 0)
        for (index, task) in slow.enumerated() {
            let reply = try await task.value
            #expect(reply.status == 200 && reply.body == Data(TestData.bytes(count: large, seed: UInt64(71 + index))))
        }
        try await proxy.stop()
        try await control.stop()
    }

    static func size(of path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }
}
