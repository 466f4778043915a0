import Foundation
import StreamCacheTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C (SIGINT) and SIGTERM end every long-running command the same way, with the status a
/// shell expects: `serve` and `origin` stop cleanly (0) whatever their clients are doing; a
/// download stops with 130 or 143 and says how to resume. How fast they stop is measured by
/// `bench/stop.sh` (a test's clock is at the mercy of the other tests' load).
@Suite(.timeLimit(.minutes(3))) struct SignalTests {
    @Test(arguments: [SIGINT, SIGTERM])
    func serveStopsAtOnceIdleOrServing(signal: Int32) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        // Idle, just started.
        let idle = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let ended = try #require(try await idle.end(with: signal), "serve did not stop on signal \(signal)")
        #expect(ended.status == 0, "\(ended)")

        // With an idle keep-alive client, and a player in the middle of a slow origin's body.
        let origin = try await OriginProcess(directory: workspace.originDirectory, arguments: ["--rate", "200000"])
        try workspace.write(TestData.bytes(count: 4_000_000, seed: 12), as: "slow.bin")
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        // A client that sent one request on its connection and keeps it open.
        let keepAlive = try RawSocket.connect(host: "127.0.0.1", port: proxy.port)
        defer { close(keepAlive.descriptor) }
        let request =
            "GET \(origin.url("slow.bin")) HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\nRange: bytes=0-9\r\n\r\n"
        _ = request.withCString { send(keepAlive.descriptor, $0, strlen($0), 0) }
        let player = ChildProcess()
        player.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        player.arguments = ["-s", "-o", "/dev/null", proxy.url(origin.url("slow.bin"))]
        try player.run()
        defer { if player.isRunning { player.terminate() } }
        try await Task.sleep(for: .milliseconds(800))
        let serving = try #require(try await proxy.end(with: signal), "serve did not stop on signal \(signal)")
        #expect(serving.status == 0, "\(serving)")
        try await origin.stop()
    }

    @Test(arguments: [SIGINT, SIGTERM])
    func originStopsAtOnce(signal: Int32) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let ended = try #require(try await origin.end(with: signal), "origin did not stop on signal \(signal)")
        #expect(ended.status == 0, "\(ended)")
    }

    /// `hls download`: the shell's status for the signal, and one line on how to resume.
    @Test(arguments: [SIGINT, SIGTERM])
    func anOfflineDownloadStopsWithTheSignalsStatus(signal: Int32) async throws {
        let setup = try await OfflineSetup(originArguments: ["--rate", "20000"])
        defer { setup.remove() }
        try await TestStreams.make(.ts, in: setup.workspace.originDirectory, seconds: 20)
        let (process, _, errors) = try CLI.start(
            ["hls", "download", setup.origin.url(TestStreams.Kind.ts.playlist)],
            cacheDir: setup.workspace.cacheDirectory
        )
        // Its first line says it is downloading: its signal handlers are in place by then (a
        // fixed wait fell short on a busy machine).
        _ = try await errors.firstLine()
        try await Task.sleep(for: .milliseconds(300))
        #expect(process.isRunning)
        if process.isRunning { kill(process.processIdentifier, signal) }
        let status = try await onOwnThread {
            process.waitUntilExit()
            return process.terminationStatus
        }
        #expect(status == 128 + signal)
        let text = try await errors.text()
        #expect(text.hasSuffix("interrupted; run the same command again to resume\n"), "\(text)")
    }
}
