import Foundation
import Testing

@testable import StreamCacheDASHModel

/// A representation's segments from each way an MPD addresses them, and the bounds and
/// identifiers it refuses.
@Suite struct SegmentIndexTests {
    static let url = URL(string: "https://cdn.example/show/manifest.mpd")!

    static func segments(_ body: String, duration: String = "PT8S") throws -> [SegmentIndex] {
        let text = """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="\(duration)">
              <Period><AdaptationSet mimeType="video/mp4">\(body)</AdaptationSet></Period>
            </MPD>
            """
        let presentation = try MediaPresentation(parsing: Array(text.utf8))
        var indexes: [SegmentIndex] = []
        var budget = SegmentBudget()
        for representation in presentation.representations(documentURL: url) {
            indexes.append(try SegmentIndex(representation, budget: &budget))
        }
        return indexes
    }

    @Test func aTimelineWithRepeatsAndTimesInTheTemplate() throws {
        let index = try #require(
            try Self.segments(
                """
                <SegmentTemplate timescale="1000" initialization="init-$RepresentationID$.mp4" media="$RepresentationID$/t$Time%08d$.m4s">
                  <SegmentTimeline><S t="0" d="2000" r="2"/><S d="1500"/></SegmentTimeline>
                </SegmentTemplate>
                <Representation id="v1" bandwidth="100"/>
                """
            ).first
        )
        #expect(index.initialization?.url.absoluteString == "https://cdn.example/show/init-v1.mp4")
        #expect(
            index.media.map(\.url.lastPathComponent) == [
                "t00000000.m4s", "t00002000.m4s", "t00004000.m4s", "t00006000.m4s",
            ]
        )
        #expect(index.media.map(\.duration) == [2, 2, 2, 1.5])
    }

    @Test func aRepeatToTheEndOfThePeriodAndANumberTemplate() throws {
        let timeline = try #require(
            try Self.segments(
                """
                <SegmentTemplate timescale="10" media="n$Number%03d$.m4s" startNumber="5">
                  <SegmentTimeline><S t="0" d="20" r="-1"/></SegmentTimeline>
                </SegmentTemplate>
                <Representation id="a" bandwidth="1"/>
                """
            ).first
        )
        #expect(timeline.media.map(\.url.lastPathComponent) == ["n005.m4s", "n006.m4s", "n007.m4s", "n008.m4s"])
        let numbered = try #require(
            try Self.segments(
                """
                <SegmentTemplate timescale="1" duration="3" media="$Bandwidth$-$Number$.m4s"/>
                <Representation id="a" bandwidth="777"/>
                """
            ).first
        )
        // 8 s in 3 s segments: the last is 2 s.
        #expect(numbered.media.map(\.url.lastPathComponent) == ["777-1.m4s", "777-2.m4s", "777-3.m4s"])
        #expect(numbered.media.map(\.duration) == [3, 3, 2])
    }

    @Test func aListWithRangesAndOneFileOnDemand() throws {
        let list = try #require(
            try Self.segments(
                """
                <Representation id="0" bandwidth="1"><BaseURL>one.mp4</BaseURL>
                  <SegmentList timescale="1000" duration="2000">
                    <Initialization range="0-812"/>
                    <SegmentURL mediaRange="813-39155"/><SegmentURL mediaRange="39156-78026"/>
                  </SegmentList>
                </Representation>
                """
            ).first
        )
        #expect(
            list.initialization
                == SegmentReference(url: URL(string: "https://cdn.example/show/one.mp4")!, range: 0...812)
        )
        #expect(list.media.map(\.range) == [813...39155, 39156...78026])
        let onDemand = try #require(
            try Self.segments(
                """
                <Representation id="0" bandwidth="1"><BaseURL>https://files.example/v.mp4</BaseURL>
                  <SegmentBase indexRange="862-957"><Initialization range="0-861"/></SegmentBase>
                </Representation>
                """
            ).first
        )
        #expect(onDemand.sidx == SegmentReference(url: URL(string: "https://files.example/v.mp4")!, range: 862...957))
        #expect(onDemand.initialization?.range == 0...861 && onDemand.media.isEmpty)
    }

    @Test func templatesAtEachLevelMergeDownward() throws {
        let index = try #require(
            try Self.segments(
                """
                <SegmentTemplate timescale="1" duration="4" media="$RepresentationID$/$Number$.m4s" initialization="$RepresentationID$/init.mp4"/>
                <Representation id="low" bandwidth="1"/>
                <Representation id="high" bandwidth="2"><SegmentTemplate startNumber="10"/></Representation>
                """
            ).last
        )
        #expect(
            index.media.map(\.url.absoluteString) == [
                "https://cdn.example/show/high/10.m4s", "https://cdn.example/show/high/11.m4s",
            ]
        )
    }

    @Test(arguments: [
        ("<SegmentTemplate media=\"$Nope$.m4s\" duration=\"1\"/>", "unknown identifier $Nope$"),
        (
            "<SegmentTemplate media=\"x.m4s\"><SegmentTimeline><S d=\"1\" r=\"999999999\"/></SegmentTimeline></SegmentTemplate>",
            "more than 500000 in all"
        ),
        (
            "<SegmentTemplate media=\"$Number$.m4s\" duration=\"1\" timescale=\"1000000\"/>",
            "more than 500000 in all"
        ),
        ("<SegmentTemplate media=\"$Number$.m4s\"/>", "neither a SegmentTimeline nor a duration"),
        ("<SegmentTemplate media=\"$Number%0zd$.m4s\" duration=\"1\"/>", "invalid format"),
    ])
    func badAddressingIsRefusedNamingTheElement(template: String, message: String) {
        #expect {
            _ = try Self.segments(template + "<Representation id=\"r\" bandwidth=\"1\"/>")
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    /// The segments of every representation of a document count against one budget: 2,000
    /// representations of 300 segments each (600,000) are refused, 1,500 (450,000) are not, and
    /// nothing past the budget is made.
    @Test(arguments: [(1500, true), (2000, false)])
    func oneBudgetBoundsTheWholeDocument(representations: Int, fits: Bool) throws {
        let body =
            "<SegmentTemplate media=\"$RepresentationID$/$Number$.m4s\" duration=\"1\"/>"
            + (0..<representations).map { "<Representation id=\"r\($0)\" bandwidth=\"1\"/>" }.joined()
        if fits {
            let indexes = try Self.segments(body, duration: "PT300S")
            #expect(indexes.map(\.media.count).reduce(0, +) == representations * 300)
        } else {
            #expect {
                _ = try Self.segments(body, duration: "PT300S")
            } throws: { error in
                "\(error)".contains("more than 500000 in all")
            }
        }
    }

    /// Every number an MPD gives that the segments are worked out from, at and past the edges of
    /// `Int64`: each is refused naming the element, none wraps or stops the process.
    @Test(arguments: [
        (
            "<SegmentTemplate media=\"$Number$.m4s\" duration=\"1\" startNumber=\"9223372036854775807\"/>",
            "invalid startNumber"
        ),
        ("<SegmentTemplate media=\"$Number$.m4s\" duration=\"1\" startNumber=\"4611686018427387900\"/>", "counts past"),
        (
            "<SegmentTemplate media=\"$Time$.m4s\" duration=\"1\" presentationTimeOffset=\"4611686018427387900\"/>",
            "counts past"
        ),
        ("<SegmentTemplate media=\"$Number$.m4s\" duration=\"1\" timescale=\"0\"/>", "invalid timescale"),
        ("<SegmentTemplate media=\"$Number$.m4s\" duration=\"1\" timescale=\"-1000\"/>", "invalid timescale"),
        ("<SegmentTemplate media=\"$Number$.m4s\" duration=\"1\" timescale=\"99999999999\"/>", "invalid timescale"),
        (
            "<SegmentTemplate media=\"$Time$.m4s\"><SegmentTimeline><S t=\"9223372036854775800\" d=\"1\"/></SegmentTimeline></SegmentTemplate>",
            "invalid t"
        ),
        (
            "<SegmentTemplate media=\"$Time$.m4s\"><SegmentTimeline><S t=\"4611686018427387900\" d=\"2\" r=\"5\"/></SegmentTimeline></SegmentTemplate>",
            "counts past"
        ),
        (
            "<SegmentTemplate media=\"$Time$.m4s\"><SegmentTimeline><S d=\"4611686018427387904\"/></SegmentTimeline></SegmentTemplate>",
            "has no valid d"
        ),
        (
            "<SegmentTemplate media=\"$Time$.m4s\" timescale=\"4294967295\"><SegmentTimeline><S d=\"1\" r=\"-1\"/></SegmentTimeline></SegmentTemplate>",
            "more than 500000 in all"
        ),
        (
            "<SegmentList duration=\"1\" timescale=\"0\"><SegmentURL media=\"a.m4s\"/></SegmentList>",
            "invalid timescale"
        ),
    ])
    func numbersPastWhatCanBeCountedAreRefused(template: String, message: String) {
        #expect {
            _ = try Self.segments(template + "<Representation id=\"r\" bandwidth=\"9223372036854775807\"/>")
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    @Test func aDurationTooLongToCountIsNoDuration() throws {
        let nines = String(repeating: "9", count: 400)
        #expect(ISODuration.seconds("PT\(nines)S") == nil)
        #expect(ISODuration.seconds("P99999999999Y") == nil)
        #expect {
            _ = try Self.segments(
                "<SegmentTemplate media=\"$Number$.m4s\" duration=\"1\"/><Representation id=\"r\" bandwidth=\"1\"/>",
                duration: "PT\(nines)S"
            )
        } throws: { error in
            "\(error)".contains("no duration to count its segments by")
        }
    }

    @Test func aBandwidthPastATerabitIsReadAsOne() throws {
        let text = """
            <MPD type="static" mediaPresentationDuration="PT8S"><Period><AdaptationSet mimeType="video/mp4">
            <Representation id="a" bandwidth="9223372036854775807"/><Representation id="b" bandwidth="-5"/>
            </AdaptationSet></Period></MPD>
            """
        let representations = try MediaPresentation(parsing: Array(text.utf8)).representations(documentURL: Self.url)
        #expect(representations.map(\.bandwidth) == [DASHRepresentation.maximumBandwidth, 0])
    }

    @Test func durationsReadAsMPDsWriteThem() {
        #expect(ISODuration.seconds("PT1H2M3.5S") == 3723.5)
        #expect(ISODuration.seconds("PT0H12M14.000S") == 734)
        #expect(ISODuration.seconds("P1DT2H") == 93600)
        #expect(ISODuration.seconds("1H") == nil && ISODuration.seconds("PTxS") == nil)
    }
}
