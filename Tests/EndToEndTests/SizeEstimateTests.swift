import Foundation
import Testing

/// The size `hls download` expects before it fetches a segment (what its free-space check and
/// `--dry-run` rest on) against the size of the package it then writes, for every kind of test
/// stream, through the built binary.
@Suite(.timeLimit(.minutes(5))) struct SizeEstimateTests {
    /// Within 15 % of the package for each kind, with every rendition; long enough (40 s, 20
    /// segments) that a rendition's size is worked out from a sample of its segments.
    @Test(arguments: TestStreams.Kind.allCases)
    func theEstimateIsWithinFifteenPercentOfThePackage(kind: TestStreams.Kind) async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        // A bit rate the encoder cannot reach on a test pattern: the playlist's BANDWIDTH is
        // then far above what the segments hold, as it is in many real streams.
        try await TestStreams.make(kind, in: setup.workspace.originDirectory, seconds: 40, videoBitrate: "2M")
        let selection = ["--audio", "all", "--subtitles", "all"]
        let dry = try await setup.download(kind.playlist, selection + ["--dry-run", "--json"])
        #expect(dry.status == 0, "\(kind): \(dry.stderr)")
        let event = try #require(try OfflineSelectionTests.events(dry.output).first)
        let estimate = try #require(event["estimatedBytes"] as? Int64, "\(kind): \(dry.output)")
        // A dry run reads at most the first bytes of the segments it samples.
        let requests = try await setup.origin.stats().requests.filter { !$0.path.hasSuffix(".m3u8") }
        #expect(
            requests.allSatisfy { $0.bodyBytes <= 2 || $0.path.hasSuffix(".key") },
            "\(kind): \(requests.map { "\($0.path) \($0.range ?? "") \($0.bodyBytes)" })"
        )

        let result = try await setup.download(kind.playlist, selection)
        #expect(result.status == 0, "\(kind): \(result.stderr)")
        let id = try #require(result.output.split(separator: "\n").last.map(String.init))
        let manifest = try setup.manifest(id)
        var actual: Int64 = 0
        for item in manifest.items {
            let path = setup.library + "/" + id + "/" + item.path
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber
            actual += size?.int64Value ?? 0
        }
        let ratio = Double(estimate) / Double(actual)
        #expect(abs(ratio - 1) <= 0.15, "\(kind): estimated \(estimate) bytes, the package holds \(actual)")
    }
}
