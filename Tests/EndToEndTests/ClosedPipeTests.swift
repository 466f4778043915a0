import Foundation
import StreamCacheTesting
import Testing

/// A command whose reader of standard output goes away (`download --json | head -1`) neither
/// stops with a stack trace nor leaves its work undone: what it would print goes nowhere.
@Suite(.timeLimit(.minutes(2))) struct ClosedPipeTests {
    @Test func aDownloadWhoseJSONReaderLeavesFinishesQuietly() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        _ = try setup.writeTwoSegmentShow(seed: 740)
        let command = [
            CLI.binary, "download", setup.origin.url("show/index.m3u8"), "--json",
            "--cache-dir", setup.workspace.cacheDirectory, "--library", setup.library,
        ]
        .map { "'" + $0 + "'" }.joined(separator: " ")
        let script = "set -o pipefail; \(command) | head -1 >/dev/null; echo \"status ${PIPESTATUS[0]}\""
        let run = try await Tool.run("bash", ["-c", script])
        #expect(run.output.contains("status 0"), "\(run.output) \(run.stderr)")
        #expect(!run.stderr.contains("Fatal error"), "\(run.stderr)")
        let assets = try await setup.assets()
        #expect(assets.count == 1 && assets.first?.state == "complete", "\(assets.map(\.state))")
    }
}
