import Foundation
import Testing

@testable import StreamCacheHLS
@testable import StreamCacheOfflineCore

/// How a recording follows an origin's numbering across reloads: what is new, what was lost,
/// a copy served stale, a numbering that starts again; and what the package's playlist says.
@Suite struct TrackRecordingTests {
    static let url = URL(string: "https://live.example/ch1/index.m3u8")!

    /// A live playlist of `count` two-second segments from media sequence `first`.
    static func window(_ first: Int64, _ count: Int) -> MediaPlaylist {
        var text = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:\(first)\n"
        for sequence in first..<first + Int64(count) { text += "#EXTINF:2.0,\nseg\(sequence).ts\n" }
        guard case .media(let playlist) = try? Playlist(parsing: Array(text.utf8), url: url.absoluteString) else {
            fatalError("the test playlist does not parse")
        }
        return playlist
    }

    static func track() -> TrackRecording {
        TrackRecording(
            url: url,
            playlist: RecordedPlaylist(origin: window(0, 1)),
            planner: SegmentPlanner(
                url: url,
                rendition: 0,
                folder: "video",
                decrypting: true,
                naming: .recorded(epoch: 0)
            ),
            lost: RecordingState.Track()
        )
    }

    /// Takes what `playlist` has new and lists all of it, as a recording whose fetches succeed.
    static func record(_ track: inout TrackRecording, _ playlist: MediaPlaylist, start: Int64 = 0) -> [Int64] {
        let taken = track.newSegments(in: playlist, startingAt: start)
        for (sequence, segment) in taken {
            let (planned, _) = try! track.planner.plan(segment, sequence: sequence, position: 0, time: 0)
            track.took(planned, duration: segment.duration)
        }
        return taken.map(\.0)
    }

    @Test func eachReloadGivesWhatIsNewAndNothingTwice() {
        var track = Self.track()
        #expect(Self.record(&track, Self.window(10, 3), start: 11) == [11, 12])
        #expect(Self.record(&track, Self.window(10, 3)).isEmpty)
        #expect(Self.record(&track, Self.window(11, 3)) == [13])
        #expect(track.lost.lostSegments == 0)
        #expect(track.playlist.playlist.segments.map(\.uri) == ["s11.ts", "s12.ts", "s13.ts"])
        #expect(!track.playlist.playlist.segments.contains { $0.discontinuity })
    }

    @Test func segmentsThatLeftTheWindowAreCountedAndTheNextIsMarked() {
        var track = Self.track()
        _ = Self.record(&track, Self.window(0, 3))
        // Segments 3 and 4 came and went between two reloads.
        #expect(Self.record(&track, Self.window(5, 3)) == [5, 6, 7])
        #expect(track.lost.lostSegments == 2 && track.lost.lostSeconds == 4)
        let segments = track.playlist.playlist.segments
        #expect(segments.map(\.discontinuity) == [false, false, false, true, false, false])
    }

    @Test func aCopyServedStaleIsNotNewAndANumberingThatStartsAgainIsANewEpoch() {
        var track = Self.track()
        _ = Self.record(&track, Self.window(20, 3))
        // A cache in front of the origin serves an older copy: nothing new, nothing lost.
        #expect(Self.record(&track, Self.window(19, 3)).isEmpty)
        #expect(track.lost.lostSegments == 0)
        // The packager restarted and counts from 0: all of it is new, in files of their own.
        #expect(Self.record(&track, Self.window(0, 3)) == [0, 1, 2])
        let names = track.playlist.playlist.segments.map(\.uri)
        #expect(names == ["s20.ts", "s21.ts", "s22.ts", "e1-s0.ts", "e1-s1.ts", "e1-s2.ts"])
        #expect(track.playlist.playlist.segments[3].discontinuity)
        #expect(TrackRecording.numbering(ofFileName: "e1-s2.ts")! == (1, 2))
    }

    /// A recording restarted (after a kill) goes on after its last listed segment; only what
    /// the origin dropped meanwhile makes a discontinuity.
    @Test(arguments: [false, true])
    func aRestartedTrackGoesOnAfterItsLastListedSegment(originDroppedSome: Bool) {
        var track = Self.track()
        _ = Self.record(&track, Self.window(0, 4))
        let text = track.playlist.text(ended: false)
        var restarted = TrackRecording(
            url: Self.url,
            playlist: RecordedPlaylist(text: text)!,
            planner: SegmentPlanner(
                url: Self.url,
                rendition: 0,
                folder: "video",
                decrypting: true,
                naming: .recorded(epoch: 0)
            ),
            lost: track.lost
        )
        #expect(restarted.lastSequence == 3)
        if originDroppedSome {
            // Segments 4 and 5 left the window while nothing recorded: a loss, the next is marked.
            #expect(Self.record(&restarted, Self.window(6, 3)) == [6, 7, 8])
            #expect(restarted.playlist.playlist.segments[4].discontinuity)
            #expect(restarted.lost.lostSegments == 2)
        } else {
            #expect(Self.record(&restarted, Self.window(2, 4)) == [4, 5])
            #expect(!restarted.playlist.playlist.segments.contains { $0.discontinuity }, "nothing was lost")
        }
    }

    /// Renditions whose first reloads saw different windows are cut to the segments all have.
    @Test func tracksAreCutToTheSegmentsEveryOneHas() {
        var video = Self.track()
        var audio = Self.track()
        _ = Self.record(&video, Self.window(10, 4), start: 10)
        _ = Self.record(&audio, Self.window(11, 4), start: 10)
        #expect((video.firstListed, audio.firstListed) == (10, 11))
        #expect((video.lastListed, audio.lastListed) == (13, 14))
        video.cut(before: 11)
        audio.cut(before: 11)
        video.cut(after: 13)
        audio.cut(after: 13)
        #expect(video.playlist.playlist.segments.map(\.uri) == ["s11.ts", "s12.ts", "s13.ts"])
        #expect(audio.playlist.playlist.segments.map(\.uri) == ["s11.ts", "s12.ts", "s13.ts"])
    }

    @Test func thePackagesPlaylistIsAnEventThenVODWithoutLowLatencyTags() throws {
        var playlist = RecordedPlaylist(origin: Self.window(0, 1))
        var segment = Segment(uri: "s0.ts", duration: 2)
        segment.leadingLines = ["#EXT-X-PART:DURATION=1.0,URI=\"p0.mp4\"", "#EXT-X-CUE-OUT:30"]
        playlist.append(segment, afterLoss: false)
        let recording = playlist.text(ended: false)
        #expect(recording.contains("#EXT-X-PLAYLIST-TYPE:EVENT") && !recording.contains("#EXT-X-ENDLIST"))
        #expect(!recording.contains("EXT-X-PART") && recording.contains("#EXT-X-CUE-OUT:30"))
        let ended = playlist.text(ended: true)
        #expect(ended.contains("#EXT-X-PLAYLIST-TYPE:VOD") && ended.contains("#EXT-X-ENDLIST"))
    }

    @Test func aKeyKeptEncryptedGetsTheIVTheOriginsNumberingImplied() throws {
        var planner = SegmentPlanner(
            url: Self.url,
            rendition: 0,
            folder: "video",
            decrypting: false,
            naming: .recorded(epoch: 0)
        )
        var segment = Segment(uri: "seg.ts", duration: 2)
        segment.keys = [Key(attributes: try AttributeList(parsing: "METHOD=AES-128,URI=\"k.bin\""))]
        let (planned, items) = try planner.plan(segment, sequence: 300, position: 0, time: 0)
        #expect(planned.keys.first?.iv == "0x0000000000000000000000000000012c")
        #expect(items.map(\.kind) == [.key, .segment])
        // The same key for the next segment is not planned again.
        let (_, next) = try planner.plan(segment, sequence: 301, position: 0, time: 2)
        #expect(next.map(\.kind) == [.segment])
    }
}
