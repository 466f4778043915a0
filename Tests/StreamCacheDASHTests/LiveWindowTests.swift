import Foundation
import Testing

@testable import StreamCacheDASHModel

/// Which segments a representation of a dynamic MPD offers at a moment: by the template's
/// duration and the clock, or as its timeline lists them, within the time-shift buffer, past what
/// was taken, the newest few; found by arithmetic, so a presentation that began long ago costs
/// what one that began a minute ago does.
@Suite struct LiveWindowTests {
    static let url = URL(string: "https://live.example/channel/manifest.mpd")!

    /// The one representation of a dynamic MPD whose `SegmentTemplate` has `template` inside.
    static func representation(_ template: String) throws -> DASHRepresentation {
        let text = """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="1970-01-01T00:00:00Z">
            <Period start="PT0S"><AdaptationSet mimeType="video/mp4">
            <Representation id="v" bandwidth="1000">\(template)</Representation>
            </AdaptationSet></Period></MPD>
            """
        return try #require(try MediaPresentation(parsing: Array(text.utf8)).representations(documentURL: url).first)
    }

    @Test func aDurationMakesAvailableWhatHasEndedByNowEvenYearsAfterTheStart() throws {
        let representation = try Self.representation(
            #"<SegmentTemplate timescale="1000" duration="2000" startNumber="5" media="$Number$.m4s" initialization="init.mp4"/>"#
        )
        // Fifty-six years of 2 s segments: the newest three, at once.
        let elapsed = 1_766_000_000.5
        let window = try representation.liveWindow(elapsed: elapsed, depth: nil, after: -1e9, limit: 3)
        let last = Int64(elapsed / 2) - 1
        #expect(window.segments.map(\.number) == [last - 2 + 5, last - 1 + 5, last + 5])
        #expect(window.segments.last?.end == Double(last + 1) * 2)
        #expect(window.segments.last?.url.lastPathComponent == "\(last + 5).m4s")
        #expect(window.initialization?.lastPathComponent == "init.mp4" && window.isNumbered)
        // Past what was taken: only what ended since.
        let next = try representation.liveWindow(elapsed: 21, depth: nil, after: 16, limit: 1000)
        #expect(next.segments.map(\.start) == [16, 18])
    }

    @Test func aTimelineIsTakenAsListedWithinTheBufferAndAnOpenRepeatRunsToNow() throws {
        let representation = try Self.representation(
            #"<SegmentTemplate timescale="10" presentationTimeOffset="100" media="$Time$.m4s"><SegmentTimeline><S t="100" d="20" r="-1"/></SegmentTimeline></SegmentTemplate>"#
        )
        // Ended by 11 s: [0, 2) … [8, 10); of those, the ones ending after 4 s.
        let window = try representation.liveWindow(elapsed: 11, depth: nil, after: 4, limit: 1000)
        #expect(window.segments.map(\.start) == [4, 6, 8])
        #expect(window.segments.map(\.url.lastPathComponent) == ["140.m4s", "160.m4s", "180.m4s"])
        #expect(!window.isNumbered)
        // A buffer of 5 s at 20 s: what ends after 15 s.
        let buffered = try representation.liveWindow(elapsed: 20, depth: 5, after: -1e9, limit: 1000)
        #expect(buffered.segments.map(\.start) == [14, 16, 18])
    }

    @Test func aTimelineOfAMillionMillionRepeatsIsReadByArithmetic() throws {
        let representation = try Self.representation(
            #"<SegmentTemplate timescale="1" media="$Number$.m4s"><SegmentTimeline><S t="0" d="1" r="1000000000000"/></SegmentTimeline></SegmentTemplate>"#
        )
        let window = try representation.liveWindow(elapsed: 5, depth: nil, after: 999_999_999_990, limit: 2)
        #expect(window.segments.map(\.number) == [1_000_000_000_000, 1_000_000_000_001])
    }

    @Test func onlyATemplateCanBeRecorded() throws {
        let representation = try Self.representation(
            #"<SegmentList duration="2"><SegmentURL media="a.m4s"/></SegmentList>"#
        )
        #expect(throws: ManifestParseError.self) {
            try representation.liveWindow(elapsed: 10, depth: nil, after: 0, limit: 10)
        }
    }
}
