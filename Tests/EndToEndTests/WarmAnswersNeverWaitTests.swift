import Foundation
import StreamCacheTesting
import Testing

/// Warm answers come at once, whatever another connection of the same proxy waits on: here a name
/// its resolver takes 5 s to answer. Measured beside the same proxy with nothing slow in flight,
/// so that a busy test run slows both alike; a warm answer that waited on the resolver would take
/// seconds.
@Suite(.timeLimit(.minutes(3)), .enabled(if: Tmpfs.canMount, "a resolver of its own needs a mount namespace (root)"))
struct WarmAnswersNeverWaitTests {
    /// What `warm_latency.py` measured, in milliseconds.
    struct Latency: Decodable, CustomStringConvertible {
        let count: Int
        let p50: Double
        let p99: Double
        let max: Double
        var description: String { "\(count) answers, p50 \(p50) ms, p99 \(p99) ms, max \(max) ms" }
    }

    /// The most a warm answer's p99 may be beside the slow work: 20 ms, or twice what it was
    /// without it when the test run is busier than that.
    static func bound(alone: Latency) -> Double { Swift.max(20, 2 * alone.p99) }

    static func fixture(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/" + name).path
    }

    /// 4 KiB ranges of `url` asked one after another on one connection for `seconds`.
    static func measure(_ url: String, seconds: Int) async throws -> Latency {
        let result = try await Tool.run("python3", [fixture("warm_latency.py"), url, String(seconds)])
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
                "python3", WarmAnswersNeverWaitTests.fixture("slow_resolver.py"), address, "\(seconds)",
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

    @Test func aWarmAnswerDoesNotWaitOnANameTheResolverTakesFiveSecondsFor() async throws {
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
        #expect(beside.p99 <= Self.bound(alone: alone), "alone: \(alone); beside the names: \(beside)")
    }
}
