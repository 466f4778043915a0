import Foundation
import StreamCacheDASHModel
import Testing

@testable import StreamCacheTesting

/// `streamcache origin DIR --live` serves a static MPD as a live presentation that advances with
/// the clock: a dynamic MPD whose timelines list the first segments, then one more as each
/// segment's duration passes, a sliding window moving `startNumber`, and the static MPD again
/// once every segment is listed.
@Suite struct LiveMPDTests {
    /// An MPD as ffmpeg's DASH muxer writes one: video of four 2 s segments (one `S` repeated)
    /// and audio of four segments of their own durations.
    static let mpd = """
        <?xml version="1.0" encoding="utf-8"?>
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT8.0S" minBufferTime="PT4.0S">
        <Period id="0" start="PT0.0S">
        <AdaptationSet id="0" contentType="video"><Representation id="0" mimeType="video/mp4" bandwidth="150000">
        <SegmentTemplate timescale="10240" initialization="init-$RepresentationID$.m4s" media="chunk-$RepresentationID$-$Number%05d$.m4s" startNumber="1">
        <SegmentTimeline><S t="0" d="20480" r="3" /></SegmentTimeline></SegmentTemplate>
        </Representation></AdaptationSet>
        <AdaptationSet id="1" contentType="audio"><Representation id="1" mimeType="audio/mp4" bandwidth="69000">
        <SegmentTemplate timescale="44100" initialization="init-$RepresentationID$.m4s" media="chunk-$RepresentationID$-$Number%05d$.m4s" startNumber="1">
        <SegmentTimeline><S t="0" d="88064" /><S d="89088" /><S d="88064" /><S d="87584" /></SegmentTimeline></SegmentTemplate>
        </Representation></AdaptationSet>
        </Period></MPD>
        """

    /// The view `seconds` after the streams began, with a window of two segments.
    static func view(
        after seconds: Double,
        isEvent: Bool = false
    ) throws -> (text: String, listed: Int, mpd: MediaPresentation) {
        let schedule = LiveSchedule(window: 2, isEvent: isEvent, started: .now - .milliseconds(Int64(seconds * 1000)))
        let view = try #require(schedule.mpdView(of: Array(mpd.utf8)))
        return (view.text, view.listed, try MediaPresentation(parsing: Array(view.text.utf8)))
    }

    /// Each template's `startNumber` and its timeline's `S` entries as `t:d` (`t` where given).
    static func timelines(_ mpd: MediaPresentation) -> [String] {
        mpd.root.elements("Period")[0].elements("AdaptationSet").map { set in
            let template = set.elements("Representation")[0].elements("SegmentTemplate")[0]
            let entries = template.elements("SegmentTimeline")[0].elements("S").map {
                ($0.attributes["t"].map { $0 + ":" } ?? "") + ($0.attributes["d"] ?? "")
            }
            return (template.attributes["startNumber"] ?? "") + " " + entries.joined(separator: ",")
        }
    }

    @Test func itStartsLiveWithTheFirstSegmentsAndSlidesAsTheyPlay() throws {
        let first = try Self.view(after: 0)
        #expect(first.mpd.isDynamic && first.listed == 4)
        #expect(Self.timelines(first.mpd) == ["1 0:20480,20480", "1 0:88064,89088"])
        #expect(first.mpd.root.attributes["mediaPresentationDuration"] == nil)
        #expect(first.mpd.root.attributes["minimumUpdatePeriod"] == "PT2.020S")
        #expect(first.mpd.root.attributes["timeShiftBufferDepth"] == "PT4.040S")
        let start = try #require(first.mpd.availabilityStart)
        // The streams began now, as if the first two segments (of 2.02 s at most) had played.
        #expect(abs(start.timeIntervalSinceNow + 4.04) < 1)

        // 2.1 s on: the third video segment (2 s) and audio one (1.997 s) are out, the first gone.
        let later = try Self.view(after: 2.1)
        #expect(later.listed == 6)
        #expect(Self.timelines(later.mpd) == ["2 20480:20480,20480", "2 88064:89088,88064"])
        // These streams began 2.1 s ago.
        #expect(abs((try #require(later.mpd.availabilityStart)).timeIntervalSinceNow + 2.1 + 4.04) < 1)
    }

    @Test func anEventKeepsEverySegmentAndTheEndIsTheStaticMPD() throws {
        let event = try Self.view(after: 2.1, isEvent: true)
        #expect(Self.timelines(event.mpd) == ["1 0:20480,20480,20480", "1 0:88064,89088,88064"])
        #expect(event.mpd.root.attributes["timeShiftBufferDepth"] == nil)
        let ended = try Self.view(after: 60)
        #expect(ended.text == Self.mpd && ended.listed == 8 && !ended.mpd.isDynamic)
    }

    @Test func aDynamicMPDOneWithoutATimelineOrTooLongIsServedAsItIs() {
        let schedule = LiveSchedule(window: 2)
        let dynamic = Self.mpd.replacingOccurrences(of: "type=\"static\"", with: "type=\"dynamic\"")
        #expect(schedule.mpdView(of: Array(dynamic.utf8)) == nil)
        let numbered = Self.mpd.replacingOccurrences(
            of: "<SegmentTimeline><S t=\"0\" d=\"20480\" r=\"3\" /></SegmentTimeline>",
            with: ""
        )
        .replacingOccurrences(
            of:
                "<SegmentTimeline><S t=\"0\" d=\"88064\" /><S d=\"89088\" /><S d=\"88064\" /><S d=\"87584\" /></SegmentTimeline>",
            with: ""
        )
        #expect(schedule.mpdView(of: Array(numbered.utf8)) == nil)
        #expect(schedule.mpdView(of: Array("not xml".utf8)) == nil)
        // One `S` repeated past what an MPD may make is not expanded.
        let endless = Self.mpd.replacingOccurrences(of: "r=\"3\"", with: "r=\"9000000000\"")
        #expect(schedule.mpdView(of: Array(endless.utf8)) == nil)
    }
}
