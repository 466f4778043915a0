import Foundation
import StreamCacheDASHModel
import Testing

@testable import StreamCacheDASH
@testable import StreamCacheOfflineCore

/// What a DASH recording takes of each reload: segments after the last taken, by time; a hole
/// counted as lost, never closed; a timeline that rewrites the past not spliced in; a `$Number$`
/// that goes backwards ending the recording in one line.
@Suite struct RepresentationRecordingTests {
    static func window(_ segments: [(start: Double, number: Int64)], numbered: Bool = true) -> LiveWindow {
        LiveWindow(
            initialization: nil,
            segments: segments.map {
                LiveSegment(
                    url: URL(string: "https://live.example/\($0.number).m4s")!,
                    start: $0.start,
                    duration: 2,
                    number: $0.number
                )
            },
            isNumbered: numbered
        )
    }

    @Test func segmentsAfterTheLastAreTakenAndAHoleIsLost() throws {
        var track = RepresentationRecording(id: "v", folder: "video")
        #expect(try track.take(Self.window([(10, 5), (12, 6)]), origin: 10) == 2)
        #expect(try track.take(Self.window([(12, 6), (14, 7)]), origin: 10) == 1)
        #expect(track.taken.map(\.path) == ["video/0.m4s", "video/2000.m4s", "video/4000.m4s"])
        // The window moved past 16 s and 18 s before the next reload.
        #expect(try track.take(Self.window([(20, 10), (22, 11)]), origin: 10) == 2)
        #expect(track.lost.lostSegments == 1 && track.lost.lostSeconds == 4)
        #expect(track.taken.last?.path == "video/12000.m4s")
    }

    @Test func aTimelineThatRewritesThePastIsNotSplicedIn() throws {
        var track = RepresentationRecording(id: "v", folder: "video")
        _ = try track.take(Self.window([(0, 1), (2, 2), (4, 3)], numbered: false), origin: 0)
        // The same time span cut anew: 3 s to 5 s overlaps what was taken.
        #expect(try track.take(Self.window([(3, 9), (5, 10)], numbered: false), origin: 0) == 0)
        #expect(track.taken.count == 3 && track.lost.lostSegments == 0)
    }

    @Test func aNumberThatGoesBackwardsEndsTheRecording() throws {
        var track = RepresentationRecording(id: "v", folder: "video")
        _ = try track.take(Self.window([(0, 7), (2, 8)]), origin: 0)
        #expect {
            try track.take(Self.window([(4, 3)]), origin: 0)
        } throws: { error in
            let error = error as? OfflineError
            return error?.kind == .manifest && error?.message.contains("went back in its $Number$") == true
        }
        #expect(track.taken.count == 2)
    }
}

extension RepresentationRecordingTests {
    /// Nothing is named before the recording's origin (another track's first segment may start
    /// later than this one's), and a package's MPD of a recording with a hole lasts to its last
    /// segment's end, not the sum of what it holds.
    @Test func nothingStartsBeforeTheOriginAndTheHoleCountsInTheDuration() throws {
        var track = RepresentationRecording(id: "a", folder: "audio")
        #expect(try track.take(Self.window([(9.98, 5), (11.98, 6)]), origin: 10) == 1)
        #expect(track.taken.map(\.path) == ["audio/1980.m4s"])
        _ = try track.take(Self.window([(15.98, 8)]), origin: 10)
        #expect(track.lost.lostSegments == 1)
        let representation = try #require(
            try MediaPresentation(
                parsing: Array(
                    """
                    <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static"><Period>
                    <AdaptationSet contentType="audio"><Representation id="a" bandwidth="1">
                    <SegmentTemplate media="$Time$.m4s"/></Representation></AdaptationSet></Period></MPD>
                    """.utf8
                )
            ).representations(documentURL: URL(string: "http://live.example/a.mpd")!).first
        )
        var entry = LocalMPD.Entry(
            representation: representation,
            folder: "audio",
            durations: track.taken.map(\.segment.duration),
            hasInitialization: false,
            wholeFile: nil
        )
        entry.times = [1980, 5980]
        let text = LocalMPD.text([entry])
        #expect(text.contains("mediaPresentationDuration=\"PT7.980S\""), "\(text)")
        #expect(text.contains("<S d=\"2000\" t=\"1980\"/><S d=\"2000\" t=\"5980\"/>"), "\(text)")
    }
}
