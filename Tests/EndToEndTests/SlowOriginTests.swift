import Foundation
import StreamCacheTesting
import Testing

/// Clients that gave up on a very slow origin left fetches "finishing the request they are in"
/// forever, holding the per-host connections, so the next request to that host hung; SIGTERM
/// then never ended the process.
@Suite(.timeLimit(.minutes(3))) struct SlowOriginTests {
    @Test func abandonedFetchesFreeTheHostAndShutdownEnds() async throws {
        let setup = try await ProxySetup(originArguments: ["--rate", "200"])
        defer { setup.remove() }
        try setup.workspace.write(TestData.bytes(count: 4 << 20, seed: 540), as: "big.bin")
        let small = TestData.bytes(count: 100, seed: 541)
        try setup.workspace.write(small, as: "small.bin")

        // 34 players that give up after a second, each at its own offset (a fetch each).
        try await withThrowingTaskGroup(of: Int32.self) { group in
            for client in 0..<34 {
                group.addTask {
                    let first = client * 100_000
                    return try await Tool.run(
                        "curl",
                        ["-s", "-o", "/dev/null", "--max-time", "1", "-r", "\(first)-", setup.url("big.bin")]
                    ).status
                }
            }
            for try await status in group { #expect(status != 0, "a client got 100 KB at 200 B/s in a second") }
        }
        // The host is free again once the abandoned fetches gave up (their grace is 3 s).
        let next = try await Tool.run(
            "curl",
            [
                "-s", "--max-time", "30", "-w", "%{http_code}", "-o", setup.workspace.output("small.bin"),
                setup.url("small.bin"),
            ]
        )
        #expect(next.output == "200", "the next request to a slow host hung: \(next.output) \(next.stderr)")
        #expect(setup.workspace.read(setup.workspace.output("small.bin")) == small)

        // SIGTERM while a player streams from the slow origin: the process ends within seconds.
        let streaming = Task {
            try await Tool.run("curl", ["-s", "-o", "/dev/null", "--max-time", "60", setup.url("big.bin")])
        }
        try await Task.sleep(for: .milliseconds(500))
        let start = ContinuousClock.now
        setup.proxy.process.terminate()
        let process = setup.proxy.process
        let exited = try await onOwnThread {
            for _ in 0..<800 where process.isRunning { usleep(10_000) }
            return !process.isRunning
        }
        #expect(exited, "serve still runs 8 s after SIGTERM")
        #expect(process.terminationStatus == 0 || !exited)
        let seconds = start.duration(to: .now)
        print("serve ended \(seconds) after SIGTERM")
        streaming.cancel()
        _ = try? await streaming.value
    }
}
