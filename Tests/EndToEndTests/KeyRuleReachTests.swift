import Foundation
import StreamCacheTesting
import Testing

/// A key rule applies to what was stored before it: cached resources move to the keys the rule
/// gives (one copy per key), and an asset downloaded under a token is the asset a download
/// under another token finds.
@Suite(.timeLimit(.minutes(3))) struct KeyRuleReachTests {
    @Test func aRuleMovesWhatWasCachedBeforeIt() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let size = 1_000_000
        let entry: [String: Any] = [
            "size": size, "headers": [["ETag", "\"one\""], ["Cache-Control", "max-age=3600"]],
        ]
        let origin = try await ScriptedOrigin(["/ep.mp3": entry], in: workspace)
        for token in ["a", "z"] {
            let got = try await CLI.run(
                ["get", origin.url("ep.mp3?token=" + token), "-o", workspace.output(token)],
                cacheDir: workspace.cacheDirectory
            )
            #expect(got.status == 0, "\(got.stderr)")
        }
        let rule = try await CLI.run(["config", "--key-ignore-query", "token"], cacheDir: workspace.cacheDirectory)
        #expect(rule.status == 0, "\(rule.stderr)")
        #expect(rule.output.contains("re-keyed 1 cached resource(s) under the new rules, 1 merged"), "\(rule.output)")

        let before = try await origin.allRequests().reduce(Int64(0)) { $0 + $1.bodyBytes }
        let got = try await CLI.run(
            ["get", origin.url("ep.mp3?token=b"), "-o", workspace.output("b")],
            cacheDir: workspace.cacheDirectory
        )
        #expect(got.status == 0, "\(got.stderr)")
        let isTheFile = workspace.read(workspace.output("b")) == ScriptedOrigin.body(size: size)
        #expect(isTheFile)
        let sent = try await origin.allRequests().reduce(Int64(0)) { $0 + $1.bodyBytes } - before
        #expect(sent <= 64 << 10, "a token after the rule cost the origin \(sent) bytes")
        let listed = try await CLI.run(["ls", "--json"], cacheDir: workspace.cacheDirectory)
        #expect(listed.output.contains("\"resources\" : 1\n"), "\(listed.output)")

        // Without the rule, each URL is its own key again.
        let none = try await CLI.run(["config", "--key-ignore-query", "none"], cacheDir: workspace.cacheDirectory)
        #expect(none.output.contains("re-keyed 1 cached resource(s)"), "\(none.output)")
        let again = try await CLI.run(["ls"], cacheDir: workspace.cacheDirectory)
        #expect(again.output.contains("token=b"), "\(again.output)")
    }

    @Test func aRuleReachesAnAssetDownloadedBeforeIt() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let playlist = try setup.writeTwoSegmentShow(seed: 730)

        let first = try await setup.download("show/index.m3u8?token=a")
        #expect(first.status == 0, "\(first.stderr)")
        let rule = try await CLI.run(
            ["config", "--key-ignore-query", "token"],
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(rule.status == 0, "\(rule.stderr)")
        let before = try await setup.origin.stats()
        let second = try await setup.download("show/index.m3u8?token=b")
        #expect(second.status == 0, "\(second.stderr)")
        let after = try await setup.origin.stats()
        let firstID = first.output.split(separator: "\n").first
        #expect(firstID != nil && second.output.split(separator: "\n").first == firstID, "\(second.output)")
        #expect(
            after.bodyBytes - before.bodyBytes <= Int64(playlist.utf8.count),
            "the second download fetched \(after.bodyBytes - before.bodyBytes) bytes"
        )
        let assets = try await setup.assets()
        #expect(assets.count == 1)
        let removed = try await CLI.run(
            ["hls", "rm", String(firstID ?? "")],
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try await setup.assets().isEmpty)
    }
}
