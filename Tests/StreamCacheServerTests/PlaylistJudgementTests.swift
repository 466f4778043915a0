import Foundation
import Testing

@testable import StreamCacheServer

/// Whether a warm request names a playlist (which the responder rewrites, so the event loop must
/// not send it as it is), judged once per connection's target and asked with and without a
/// content type in turn, as a resting resource asks it.
@Suite struct PlaylistJudgementTests {
    /// What `url`'s target answers for each content type in turn, three rounds over.
    private func verdicts(_ url: String, _ types: [String?]) -> [Bool] {
        var target = WarmRequests.Target(uri: "/" + url, url: URL(string: url)!, key: url)
        return (0..<3).flatMap { _ in types.map { target.isPlaylist($0) } }
    }

    @Test func aGenericTypeLeavesItToThePath() {
        let generic = [nil, "application/octet-stream", "text/plain; charset=utf-8", "binary/octet-stream"]
        #expect(verdicts("https://example.com/live/index.m3u8?token=1", generic).allSatisfy { $0 })
        #expect(verdicts("https://example.com/live/list.M3U", generic).allSatisfy { $0 })
        #expect(verdicts("https://example.com/live/seg1.ts", generic).allSatisfy { !$0 })
    }

    @Test func aSpecificTypeDecidesWhateverThePath() {
        #expect(
            verdicts("https://example.com/live/seg1.ts", ["application/vnd.apple.mpegurl", nil, " Audio/MPEGURL ; x=1"])
                == Array(repeating: [true, false, true], count: 3).flatMap { $0 }
        )
        #expect(
            verdicts("https://example.com/live/index.m3u8", ["video/mp2t", nil, "audio/aac"])
                == Array(repeating: [false, true, false], count: 3).flatMap { $0 }
        )
    }
}
