import Foundation
import StreamCacheTesting
import Testing

/// Budgets a person can trust, and `serve`'s page at `/`: a budget too small to hold an episode,
/// or smaller than what is read, gets one warning; a running `serve` keeps to a budget `config`
/// changes within a second; `/` says how to play through it, with its real address.
@Suite(.timeLimit(.minutes(3))) struct BudgetAndRootPageTests {
    @Test func aSmallBudgetAndAResourceLargerThanTheBudgetEachGetOneWarning() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let small = try await CLI.run(["config", "--max-size", "1k"], cacheDir: workspace.cacheDirectory)
        #expect(small.status == 0, "\(small.stderr)")
        #expect(
            small.stderr == "streamcache: warning: a budget of 1.0 KiB is under 16.0 MiB: most episodes are "
                + "larger, and stream through uncached (streamcache config --max-size 2G sets another)\n"
        )
        let fine = try await CLI.run(["config", "--max-size", "16M"], cacheDir: workspace.cacheDirectory)
        #expect(fine.status == 0 && fine.stderr.isEmpty, "\(fine.stderr)")

        try Data(count: 20 << 20).write(to: URL(fileURLWithPath: workspace.originDirectory + "/big.bin"))
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let read = try await CLI.run(
            ["get", origin.url("big.bin"), "-o", workspace.outputDirectory + "/big"],
            cacheDir: workspace.cacheDirectory
        )
        #expect(read.status == 0)
        let warnings = read.stderr.split(separator: "\n").filter { $0.hasPrefix("streamcache: warning:") }
        #expect(
            warnings.count == 1
                && warnings[0].contains("big.bin is 20.0 MiB, more than the cache's budget of 16.0 MiB"),
            "\(read.stderr)"
        )
        #expect(
            try FileManager.default.attributesOfItem(atPath: workspace.outputDirectory + "/big")[.size] as? Int == 20
                << 20
        )
    }

    @Test func serveKeepsToABudgetConfigChangesAndItsPageSaysHowToUseIt() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.multi, in: setup.workspace.originDirectory)
        let master = setup.workspace.originDirectory + "/multi/master.m3u8"
        try String(contentsOfFile: master, encoding: .utf8).replacingOccurrences(
            of: "#EXTM3U\n",
            with:
                "#EXTM3U\n#EXT-X-SESSION-DATA:DATA-ID=\"com.apple.hls.title\",VALUE=\"<script>alert(1)</script> Pilot\"\n"
        ).write(toFile: master, atomically: true, encoding: .utf8)
        let downloaded = try await setup.download("multi/master.m3u8")
        let id = try #require(downloaded.output.split(separator: "\n").last.map(String.init))
        // Another selection of the same stream, titled alike.
        let german = try await setup.download("multi/master.m3u8", "--audio", "de")
        let germanID = try #require(german.output.split(separator: "\n").last.map(String.init))

        let proxy = try await ListeningProcess(["serve"], cacheDir: setup.workspace.cacheDirectory)
        let page = try await Curl.fetch(proxy.url(""))
        let html = String(decoding: page.body, as: UTF8.self)
        #expect(page.status == 200 && page.headers["content-type"] == "text/html; charset=utf-8")
        #expect(html.contains("mpv http://127.0.0.1:\(proxy.port)/https://example.com/"), "\(html)")
        #expect(html.contains("of a 2.0 GiB budget"), "\(html)")
        #expect(
            html.contains("<a href=\"/offline/\(id)/master.m3u8\">&lt;script&gt;alert(1)&lt;/script&gt; Pilot</a>"),
            "\(html)"
        )
        #expect(!html.contains("<script>"))
        // Told apart by what each holds and its id.
        for (asset, audio) in [(id, "audio en"), (germanID, "audio de")] {
            let line = html.split(separator: "\n").first { $0.contains("/offline/\(asset)/") } ?? ""
            #expect(line.contains(audio) && line.contains("id \(asset.prefix(8))"), "\(line)")
        }

        let changed = try await CLI.run(["config", "--max-size", "64M"], cacheDir: setup.workspace.cacheDirectory)
        #expect(changed.status == 0)
        try await Task.sleep(for: .milliseconds(1500))
        let after = String(decoding: try await Curl.fetch(proxy.url("")).body, as: UTF8.self)
        #expect(after.contains("of a 64.0 MiB budget"), "serve did not follow the budget: \(after)")
        try await proxy.stop()
    }
}
