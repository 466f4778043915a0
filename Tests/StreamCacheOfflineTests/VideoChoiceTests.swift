import Foundation
import StreamCacheDASHModel
import StreamCacheHLSModel
import Testing

@testable import StreamCacheDASH
@testable import StreamCacheHLS
@testable import StreamCacheOfflineCore

/// One rule picks the video of an HLS stream and of a DASH stream: the same three videos, listed
/// as variants and as representations, give the same choice for every selection, and the same
/// refusal when nothing fits.
@Suite struct VideoChoiceTests {
    /// 400 kbit/s 640x360, 1.5 Mbit/s 1280x720, 4 Mbit/s 1920x1080 (HEVC), with one audio track.
    static let videos: [(bandwidth: Int, width: Int, height: Int, codecs: String)] = [
        (400_000, 640, 360, "avc1.64001e"), (1_500_000, 1280, 720, "avc1.64001f"),
        (4_000_000, 1920, 1080, "hvc1.1.6.L120.90"),
    ]

    static var master: MultivariantPlaylist {
        let text =
            "#EXTM3U\n"
            + videos.map {
                "#EXT-X-STREAM-INF:BANDWIDTH=\($0.bandwidth),RESOLUTION=\($0.width)x\($0.height),CODECS=\"\($0.codecs)\"\n"
                    + "v\($0.height).m3u8\n"
            }.joined()
        guard case .multivariant(let master) = try? Playlist(parsing: text) else { fatalError("not multivariant") }
        return master
    }

    static var representations: [DASHRepresentation] {
        let text = """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT4S"><Period>
            <AdaptationSet contentType="video" mimeType="video/mp4">
            \(videos.map { "<Representation id=\"v\($0.height)\" bandwidth=\"\($0.bandwidth)\" width=\"\($0.width)\" height=\"\($0.height)\" codecs=\"\($0.codecs)\"><BaseURL>v\($0.height).mp4</BaseURL></Representation>" }.joined())
            </AdaptationSet>
            <AdaptationSet contentType="audio" mimeType="audio/mp4" lang="en">
            <Representation id="a" bandwidth="128000" codecs="mp4a.40.2"><BaseURL>a.mp4</BaseURL></Representation>
            </AdaptationSet></Period></MPD>
            """
        let url = URL(string: "http://example.com/show/manifest.mpd")!
        return try! MediaPresentation(parsing: Array(text.utf8)).representations(documentURL: url)
    }

    /// The height of the video each format chooses, or the error each throws.
    static func choices(
        _ criteria: MediaSelectionCriteria
    ) -> (hls: Result<Int, OfflineError>, dash: Result<Int, OfflineError>) {
        let hls = Result { () throws(OfflineError) -> Int in
            try MediaSelection.resolve(master, criteria: criteria).variant.resolution?.height ?? 0
        }
        let dash = Result { () throws(OfflineError) -> Int in
            let chosen = try DASHPackagePlanner.choose(
                from: representations,
                criteria: criteria,
                url: URL(string: "http://example.com/show/manifest.mpd")!
            )
            return chosen.first { $0.contentType == "video" }?.height ?? 0
        }
        return (hls, dash)
    }

    static func criteria(_ change: (inout MediaSelectionCriteria) -> Void) -> MediaSelectionCriteria {
        var criteria = MediaSelectionCriteria(audio: .default, subtitles: .none)
        change(&criteria)
        return criteria
    }

    @Test(arguments: [
        (criteria { _ in }, 1080),
        (criteria { $0.bitrate = .atMost(2_000_000) }, 720),
        (criteria { $0.bitrate = .atMost(400_000) }, 360),
        (criteria { $0.bitrate = .atLeast(1_000_000) }, 720),
        (criteria { $0.maxResolution = Resolution(width: 1280, height: 720) }, 720),
        (criteria { $0.excludedCodecs = ["hvc1"] }, 720),
    ])
    func bothFormatsChooseTheSameVideo(criteria: MediaSelectionCriteria, height: Int) throws {
        let (hls, dash) = Self.choices(criteria)
        #expect(try hls.get() == height)
        #expect(try dash.get() == height)
    }

    /// A bound no video meets stops both, with what there is listed: neither keeps a video the
    /// selection ruled out.
    @Test(arguments: [
        criteria { $0.bitrate = .atMost(100_000) },
        criteria { $0.bitrate = .atLeast(10_000_000) },
        criteria { $0.maxResolution = Resolution(width: 320, height: 240) },
    ])
    func aSelectionNoVideoMeetsStopsBoth(criteria: MediaSelectionCriteria) {
        let (hls, dash) = Self.choices(criteria)
        for result in [hls, dash] {
            guard case .failure(let error) = result else {
                Issue.record("chose \(result) where nothing fits")
                continue
            }
            #expect(error.kind == .noMatchingVariant)
            #expect(error.message.contains("400 kbit/s 640x360"), "\(error.message)")
        }
    }
}
