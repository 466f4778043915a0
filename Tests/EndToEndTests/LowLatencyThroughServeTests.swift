import Foundation
import StreamCacheTesting
import Testing

/// A low-latency HLS playlist through `serve`: every part, preload hint and rendition report
/// points at the proxy (a player behind `serve` would otherwise fetch parts around the cache),
/// and each blocking reload (`_HLS_msn`, `_HLS_part`) reaches the origin.
@Suite(.timeLimit(.minutes(2))) struct LowLatencyThroughServeTests {
    /// RFC 8216bis's low-latency example, shortened.
    static let playlist = """
        #EXTM3U
        #EXT-X-TARGETDURATION:4
        #EXT-X-VERSION:6
        #EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.0,CAN-SKIP-UNTIL=12.0
        #EXT-X-PART-INF:PART-TARGET=0.33334
        #EXT-X-MEDIA-SEQUENCE:266
        #EXT-X-MAP:URI="init.mp4"
        #EXTINF:4.00008,
        fileSequence266.mp4
        #EXT-X-PART:DURATION=0.33334,URI="filePart267.0.mp4"
        #EXT-X-PART:DURATION=0.33334,URI="filePart267.1.mp4",INDEPENDENT=YES
        #EXTINF:4.00008,
        fileSequence267.mp4
        #EXT-X-PART:DURATION=0.33334,URI="filePart268.0.mp4",INDEPENDENT=YES
        #EXT-X-PRELOAD-HINT:TYPE=PART,URI="filePart268.1.mp4"
        #EXT-X-RENDITION-REPORT:URI="../1M/waitForMSN.php",LAST-MSN=268,LAST-PART=0

        """

    @Test func partsHintsAndReportsPointAtTheProxyAndBlockingReloadsReachTheOrigin() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let answer: [String: Any] = [
            "text": Self.playlist,
            "headers": [["Content-Type", "application/vnd.apple.mpegurl"], ["ETag", "\"v268\""]],
        ]
        let blocking = "/ll/index.m3u8?_HLS_msn=268&_HLS_part=1"
        let origin = try await ScriptedOrigin(["/ll/index.m3u8": answer, blocking: answer], in: workspace)
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)

        let reply = try await Curl.fetch(proxy.url(origin.url("ll/index.m3u8")))
        let text = String(decoding: reply.body, as: UTF8.self)
        let base = "/" + origin.url("ll/")
        for uri in ["filePart267.0.mp4", "filePart267.1.mp4", "filePart268.0.mp4", "filePart268.1.mp4", "init.mp4"] {
            #expect(text.contains("URI=\"\(base)\(uri)\""), "\(uri) in \(text)")
        }
        #expect(text.contains("URI=\"/\(origin.url("1M/waitForMSN.php"))\""), "\(text)")
        #expect(!text.contains("URI=\"filePart"), "a URI left pointing at the origin: \(text)")

        for round in 1...3 {
            let reload = try await Curl.fetch(proxy.url(origin.url(String(blocking.dropFirst()))))
            #expect(reload.status == 200)
            let asked = try await origin.requests(String(blocking.dropFirst()))
            #expect(
                asked.count == round,
                "blocking reload \(round) reached the origin \(asked.count) times: \(asked.map { "\($0.status) \($0.range ?? "") \($0.conditional)" })"
            )
        }
    }

    /// Blocking reloads are questions of their moment: none is stored, and 40 held at once by
    /// the origin leave the connections segments need free.
    @Test func blockingReloadsAreNotStoredAndTakeNoSegmentsConnection() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let playlist: [String: Any] = [
            "text": Self.playlist, "headers": [["Content-Type", "application/vnd.apple.mpegurl"]], "hold": 4,
        ]
        let segment: [String: Any] = ["size": 5000, "headers": [["Cache-Control", "max-age=600"]]]
        let origin = try await ScriptedOrigin(["/ll/index.m3u8": playlist, "/ll/seg.mp4": segment], in: workspace)
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        var held: [ChildProcess] = []
        defer { for player in held where player.isRunning { player.terminate() } }
        for part in 0..<40 {
            let player = ChildProcess()
            player.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            player.arguments = [
                "-s", "-o", "/dev/null", proxy.url(origin.url("ll/index.m3u8?_HLS_msn=268&_HLS_part=\(part)")),
            ]
            try player.run()
            held.append(player)
        }
        try await Task.sleep(for: .milliseconds(500))
        let started = ContinuousClock.now
        let reply = try await Curl.fetch(proxy.url(origin.url("ll/seg.mp4")))
        #expect(reply.status == 200 && reply.body.count == 5000)
        // The reloads are held for 4 s: a segment behind them would wait that long.
        #expect(started.duration(to: .now) < .seconds(3), "a segment waited behind held reloads")
        for player in held { try await onOwnThread { player.waitUntilExit() } }

        struct Listed: Decodable { let url: String }
        let listed = try await CLI.run(["ls", "--json"], cacheDir: workspace.cacheDirectory)
        let urls = try JSONDecoder().decode(ListingOf<Listed>.self, from: listed.stdout).resources.map(\.url)
        #expect(!urls.contains { $0.contains("_HLS_") }, "blocking reloads were stored: \(urls.count) resources")
        #expect(try await origin.allRequests().filter { $0.path.contains("_HLS_msn") }.count == 40)
    }
}
