import Foundation
import Testing

@testable import StreamCacheHLS
@testable import StreamCacheOfflineCore

/// Every number a playlist gives is bounded where it is read, and the recorder's pacing within
/// sane bounds whatever the target duration says.
@Suite struct PlaylistNumberTests {
    static func media(_ tags: String) -> String {
        "#EXTM3U\n" + tags + "\n#EXTINF:6.0,\na.ts\n#EXTINF:6.0,\nb.ts\n"
    }

    @Test(arguments: [
        "#EXT-X-TARGETDURATION:6\n#EXT-X-MEDIA-SEQUENCE:9223372036854775807",
        "#EXT-X-TARGETDURATION:6\n#EXT-X-MEDIA-SEQUENCE:9007199254740993",
        "#EXT-X-TARGETDURATION:6\n#EXT-X-DISCONTINUITY-SEQUENCE:9223372036854775807",
        "#EXT-X-TARGETDURATION:9223372036854775807",
    ])
    func numbersPastTheBoundAreRefusedNamingTheLine(tags: String) {
        #expect(throws: HLSParseError.self) { try Playlist(parsing: Self.media(tags)) }
    }

    @Test func theLargestNumbersLeaveRoomForEverySegment() throws {
        let text = Self.media("#EXT-X-TARGETDURATION:6\n#EXT-X-MEDIA-SEQUENCE:9007199254740992")
        guard case .media(let playlist) = try Playlist(parsing: text) else {
            Issue.record("not a media playlist")
            return
        }
        #expect(HLSLiveRecorder.start(of: playlist, fromStart: false) == 9_007_199_254_740_992)
    }

    @Test(arguments: [(1_000_000_000, 60), (0, 1), (6, 6), (nil, 6)] as [(Int?, Int64)])
    func pacingStaysWithinAMinute(target: Int?, seconds: Int64) throws {
        var text = Self.media("#EXT-X-MEDIA-SEQUENCE:1")
        if let target {
            text = text.replacingOccurrences(of: "#EXTM3U\n", with: "#EXTM3U\n#EXT-X-TARGETDURATION:\(target)\n")
        }
        guard case .media(var playlist) = try Playlist(parsing: text) else {
            Issue.record("not a media playlist")
            return
        }
        playlist.targetDuration = target
        #expect(HLSLiveRecorder.pacing(of: playlist) == .seconds(seconds))
    }
}
