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

    /// A thousand connections at the stop, a third with a whole request for a cached file, a
    /// third with half a request line, a third idle: each is closed, with a whole answer or none,
    /// never part of one, and `serve` ends with 0.
    @Test func aThousandConnectionsAtAStopGetWholeAnswersOrNone() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        try workspace.write(TestData.bytes(count: 256 << 10, seed: 31), as: "ep.mp3")
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let path = "/" + origin.url("ep.mp3")
        #expect(try await Curl.fetch(proxy.url(origin.url("ep.mp3"))).body.count == 256 << 10)

        let clients = ChildProcess()
        clients.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let script = Fixtures.path("many_connections.py")
        clients.arguments = ["python3", script, String(proxy.port), path, "1000", "20"]
        let input = Pipe()
        clients.standardInput = input
        let (out, err) = try clients.startCapturing()
        let ready = try await out.firstLine()
        if !ready.hasPrefix("ready") { Issue.record("\(try await err.text())") }
        try #require(ready.hasPrefix("ready"))
        try await Task.sleep(for: .milliseconds(300))
        let ended = try #require(try await proxy.end(with: SIGTERM), "serve did not stop with 1,000 connections")
        #expect(ended.status == 0, "\(ended)")
        input.fileHandleForWriting.write(Data("stopped\n".utf8))

        struct Outcome: Decodable {
            let whole: Int
            let none: Int
            let part: Int
            let open: Int
        }
        let line = try await out.text().split(separator: "\n").last.map(String.init) ?? ""
        let outcome = try JSONDecoder().decode(Outcome.self, from: Data(line.utf8))
        // A whole request read before the stop is answered whole; one the server had not read yet
        // when it began (a busy machine) is closed unanswered: never part of an answer.
        #expect(outcome.part == 0 && outcome.open == 0, "\(line)")
        #expect(outcome.whole + outcome.none == 1000, "\(line)")
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

    /// A signal while ffmpeg writes the one file ends ffmpeg too, and nothing of the file is
    /// left, also when a second signal ends the command at once (an ffmpeg that never ends
    /// stands in for a long mux).
    @Test(arguments: [1, 2])
    func aSignalDuringTheMuxEndsFFmpegAndLeavesNoFile(signals: Int) async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.ts, in: setup.workspace.originDirectory)
        let bin = setup.workspace.output("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let pidFile = setup.workspace.output("ffmpeg.pid")
        let script = "#!/bin/bash\necho $$ > \(pidFile)\nprintf partial > \"${@: -1}\"\nexec sleep 60\n"
        try script.write(toFile: bin + "/ffmpeg", atomically: true, encoding: .utf8)
        chmod(bin + "/ffmpeg", 0o755)
        let folder = setup.workspace.outputDirectory
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = ["download", setup.origin.url(TestStreams.Kind.ts.playlist), "-o", "out.mp4"]
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        var environment = ProcessInfo.processInfo.environment
        environment["STREAMCACHE_DIR"] = setup.workspace.cacheDirectory
        environment["STREAMCACHE_LIBRARY"] = setup.library
        environment["PATH"] = bin + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        process.environment = environment
        try process.run()
        var ffmpeg: pid_t?
        for _ in 0..<300 where ffmpeg == nil {
            try await Task.sleep(for: .milliseconds(100))
            ffmpeg = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap {
                pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
        }
        let child = try #require(ffmpeg, "ffmpeg was not started")
        defer { kill(child, SIGKILL) }
        for _ in 0..<signals {
            kill(process.processIdentifier, SIGTERM)
            try await Task.sleep(for: .milliseconds(50))
        }
        let status = try await onOwnThread {
            process.waitUntilExit()
            return process.terminationStatus
        }
        #expect(status == 143)
        var gone = false
        for _ in 0..<50 where !gone {
            gone = kill(child, 0) != 0
            if !gone { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(gone, "ffmpeg outlived the command")
        let left = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains("out.mp4") }
        #expect(left.isEmpty, "\(left)")
    }
}
