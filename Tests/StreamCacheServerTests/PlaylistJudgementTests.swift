import Foundation
import StreamCacheHLS
import Testing

@testable import StreamCacheServer

/// Whether a cache hit's target names a playlist (which the responder rewrites, so the event loop must
/// not send it as it is), judged once per connection's target and asked with and without a
/// content type in turn, as a resting resource asks it.
@Suite struct PlaylistJudgementTests {
    /// What `url`'s target answers for each content type in turn, three rounds over.
    private func verdicts(_ url: String, _ types: [String?]) -> [Bool] {
        let target = CacheHits.Target(uri: "/" + url, url: URL(string: url)!, key: url, tokenDigest: nil)
        return (0..<3).flatMap { _ in types.map { target.isManifest($0) } }
    }

    @Test func aGenericTypeLeavesItToThePath() {
        let generic = [nil, "application/octet-stream", "text/plain; charset=utf-8", "binary/octet-stream"]
        #expect(verdicts("https://example.com/live/index.m3u8?token=1", generic).allSatisfy { $0 })
        #expect(verdicts("https://example.com/live/list.M3U", generic).allSatisfy { $0 })
        #expect(verdicts("https://example.com/live/seg1.ts", generic).allSatisfy { !$0 })
    }

    @Test func aSpecificTypeDecidesWhateverThePath() {
        #expect(
            verdicts(
                "https://example.com/live/seg1.ts",
                ["application/vnd.apple.mpegurl", nil, " Audio/MPEGURL ; x=1"]
            )
                == Array(repeating: [true, false, true], count: 3).flatMap { $0 }
        )
        #expect(
            verdicts("https://example.com/live/index.m3u8", ["video/mp2t", nil, "audio/aac"])
                == Array(repeating: [false, true, false], count: 3).flatMap { $0 }
        )
    }

    /// The path's own reading agrees with Foundation's `pathExtension`, which it stands in for.
    @Test(arguments: [
        "https://example.com/live/index.m3u8", "https://example.com/live/index.m3u8/", "https://example.com/a.b.M3U",
        "https://example.com/.m3u8", "https://example.com/a/..m3u8", "https://example.com/a%2Em3u8",
        "https://example.com/list.m3u%38", "https://example.com/x", "https://example.com/", "https://example.com",
        "https://example.com/dir.m3u8/seg.ts", "https://example.com/a.m3u8;v=1", "https://example.com/a.m3u8?x=.ts",
        "https://example.com/a.m3u8#.ts", "https://example.com//a.m3u", "https://example.com/a.",
        "https://example.com/m3u8",
    ])
    func thePathIsReadAsFoundationReadsIt(url: String) throws {
        let parsed = try #require(URL(string: url))
        let byFoundation = ["m3u8", "m3u"].contains(parsed.pathExtension.lowercased())
        #expect(PlaylistRewriter.pathNames(parsed) == byFoundation)
    }
}
