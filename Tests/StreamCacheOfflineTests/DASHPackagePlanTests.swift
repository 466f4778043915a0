import Foundation
import StreamCacheDASHModel
import Testing

@testable import StreamCacheDASH
@testable import StreamCacheOfflineCore

/// What a DASH package is made of, planned from an MPD without a fetch: files in playing order
/// with their start times, a folder per representation, the package's own MPD, and the folders
/// of a package kept when representations are added to it.
@Suite struct DASHPackagePlanTests {
    static let url = URL(string: "http://origin.test/show/manifest.mpd")!

    /// An MPD of one video representation (three 2 s segments and an init section) and audio
    /// in English and French (two 3 s segments each).
    static let mpd = """
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT6S">
        <Period id="0" start="PT0S">
        <AdaptationSet contentType="video" mimeType="video/mp4">
        <Representation id="v" bandwidth="500000" codecs="avc1.64001f" width="640" height="360">
        <SegmentTemplate timescale="1000" initialization="v-init.mp4" media="v-$Number$.m4s" startNumber="1">
        <SegmentTimeline><S t="0" d="2000" r="2"/></SegmentTimeline></SegmentTemplate>
        </Representation></AdaptationSet>
        <AdaptationSet contentType="audio" mimeType="audio/mp4" lang="en">
        <Representation id="a-en" bandwidth="64000" codecs="mp4a.40.2">
        <SegmentTemplate timescale="1000" initialization="en-init.mp4" media="en-$Number$.m4s" startNumber="1">
        <SegmentTimeline><S t="0" d="3000" r="1"/></SegmentTimeline></SegmentTemplate>
        </Representation></AdaptationSet>
        <AdaptationSet contentType="audio" mimeType="audio/mp4" lang="fr">
        <Representation id="a-fr" bandwidth="64000" codecs="mp4a.40.2">
        <SegmentTemplate timescale="1000" initialization="fr-init.mp4" media="fr-$Number$.m4s" startNumber="1">
        <SegmentTimeline><S t="0" d="3000" r="1"/></SegmentTimeline></SegmentTemplate>
        </Representation></AdaptationSet>
        </Period></MPD>
        """

    /// The representations of ``mpd`` named by `ids`, in that order, with their segments.
    static func planned(_ ids: [String]) throws -> [(DASHRepresentation, SegmentIndex)] {
        let all = try DASHPackagePlanner.representations(of: Array(mpd.utf8), url: url)
        var budget = SegmentBudget()
        return try ids.map { id in
            let representation = try #require(all.first { $0.id == id })
            return (representation, try SegmentIndex(representation, budget: &budget))
        }
    }

    @Test func filesComeInPlayingOrderInAFolderPerRepresentation() throws {
        let manifest = try DASHPackagePlanner.plan(try Self.planned(["v", "a-en"]), id: "x", url: Self.url)
        #expect(manifest.entryPoint == "manifest.mpd")
        #expect(manifest.renditions.map(\.folder) == ["video", "audio-en"])
        #expect(manifest.renditions.map(\.duration) == [6, 6])
        #expect(manifest.audio == ["en"] && manifest.subtitles.isEmpty)
        #expect(manifest.selectionIDs == ["dash:v", "dash:a-en"])
        let files = manifest.items.map { "\($0.start) \($0.path) \($0.url.split(separator: "/").last!)" }
        #expect(
            files == [
                "0.0 video/init.mp4 v-init.mp4", "0.0 audio-en/init.mp4 en-init.mp4",
                "0.0 video/00001.m4s v-1.m4s", "0.0 audio-en/00001.m4s en-1.m4s",
                "2.0 video/00002.m4s v-2.m4s", "3.0 audio-en/00002.m4s en-2.m4s",
                "4.0 video/00003.m4s v-3.m4s",
            ],
            "\(files)"
        )
        // The package's MPD lists the files by number, with their durations in milliseconds.
        let local = try #require(manifest.playlists["manifest.mpd"])
        #expect(local.contains("<BaseURL>video/</BaseURL>") && local.contains("<BaseURL>audio-en/</BaseURL>"))
        // (Attributes are written in the order of their names.)
        #expect(
            local.contains("<S d=\"2000\" r=\"2\" t=\"0\"/>") && local.contains("<S d=\"3000\" r=\"1\" t=\"0\"/>"),
            "\(local)"
        )
        #expect(local.contains("media=\"$Number%05d$.m4s\"") && local.contains("initialization=\"init.mp4\""))
    }

    /// A package planned again with a representation added after those it holds keeps every
    /// rendition and file path it had (what adding a language relies on).
    @Test func representationsAddedLaterLeaveTheHeldOnesWhereTheyAre() throws {
        let held = try DASHPackagePlanner.plan(try Self.planned(["v", "a-fr"]), id: "x", url: Self.url)
        let grown = try DASHPackagePlanner.plan(try Self.planned(["v", "a-fr", "a-en"]), id: "x", url: Self.url)
        #expect(held.renditions.allSatisfy(grown.renditions.contains))
        #expect(Set(held.items.map(\.path)).isSubset(of: Set(grown.items.map(\.path))))
        #expect(grown.renditions.map(\.folder) == ["video", "audio-fr", "audio-en"])
        #expect(grown.audio == ["fr", "en"])
    }

    @Test func aLiveMPDIsRefused() throws {
        let live = Self.mpd.replacingOccurrences(of: "type=\"static\"", with: "type=\"dynamic\"")
        #expect {
            try DASHPackagePlanner.representations(of: Array(live.utf8), url: Self.url)
        } throws: { ($0 as? OfflineError)?.kind == .live }
    }

    /// ``mpd`` with its period written once for each of `periods`, as `<Period ATTRIBUTES>`.
    static func mpd(periods: [String]) throws -> String {
        let body = try #require(Self.mpd.firstRange(of: "<AdaptationSet").map { Self.mpd[$0.lowerBound...] })
        let sets = String(body).replacingOccurrences(of: "</Period></MPD>", with: "")
        let start = try #require(Self.mpd.firstRange(of: "<Period").map { String(Self.mpd[..<$0.lowerBound]) })
        return start + periods.map { "<Period \($0)>" + sets + "</Period>" }.joined() + "</MPD>"
    }

    /// Every period is planned by the same criteria into folders named for it, its files on the
    /// presentation's timeline, and the package's MPD keeps the periods at their starts.
    @Test func severalPeriodsArePlannedPeriodByPeriod() throws {
        let document = try Self.mpd(periods: ["id=\"main\" duration=\"PT6S\"", "id=\"ad\" duration=\"PT6S\""])
        let all = try DASHPackagePlanner.representations(of: Array(document.utf8), url: Self.url)
        #expect(all.map(\.periodStart) == [0, 0, 0, 6, 6, 6])
        let criteria = MediaSelectionCriteria(audio: .only(["fr"]))
        let chosen = try DASHPackagePlanner.choose(from: all, criteria: criteria, url: Self.url)
        #expect(chosen.map(DASHPackagePlanner.selectionID) == ["dash:v", "dash:a-fr", "dash@2:v", "dash@2:a-fr"])
        var budget = SegmentBudget()
        let planned = try chosen.map { ($0, try SegmentIndex($0, budget: &budget)) }
        let manifest = try DASHPackagePlanner.plan(planned, id: "x", url: Self.url)
        #expect(manifest.renditions.map(\.folder) == ["p1-video", "p1-audio-fr", "p2-video", "p2-audio-fr"])
        #expect(manifest.audio == ["fr"] && manifest.duration == 12)
        // Every file of the first period comes before any of the second.
        let starts = manifest.items.map { "\($0.start) \($0.path)" }
        #expect(
            starts.prefix(7).allSatisfy { $0.contains(" p1-") }
                && starts.dropFirst(7).allSatisfy { $0.contains(" p2-") }
        )
        #expect(starts.contains("8.0 p2-video/00002.m4s") && starts.contains("9.0 p2-audio-fr/00002.m4s"), "\(starts)")
        let local = try MediaPresentation(parsing: Array(try #require(manifest.playlists["manifest.mpd"]).utf8))
        let periods = try local.periods()
        #expect(
            periods.map(\.start) == [0, 6] && periods.map(\.duration) == [6, 6] && periods.map(\.id) == ["main", "ad"]
        )
        #expect(
            local.representations(documentURL: Self.url).map(\.baseURL.lastPathComponent)
                == ["p1-video", "p1-audio-fr", "p2-video", "p2-audio-fr"]
        )
    }

    /// Periods that cannot be placed one after another are refused in one line naming the period.
    @Test(arguments: [
        (["start=\"PT0S\"", "start=\"-PT5S\""], "period 2 has start=\"-PT5S\", not a duration of 0 s or more"),
        (
            ["start=\"PT0S\" duration=\"PT6S\"", "start=\"PT4S\""],
            "period 2 starts at 4 s, before period 1 ends at 6 s"
        ),
        (["start=\"PT10S\"", "start=\"PT2S\""], "period 2 starts at 2 s, before period 1 starts at 10 s"),
        (["id=\"a\"", "id=\"b\""], "period 2 has no start, and the period before it no duration"),
        (Array(repeating: "duration=\"PT1S\"", count: 257), "it has 257 periods; at most 256 are read"),
    ])
    func periodsThatCannotBePlacedAreRefused(periods: [String], message: String) throws {
        let document = try Self.mpd(periods: periods)
        #expect {
            try DASHPackagePlanner.representations(of: Array(document.utf8), url: Self.url)
        } throws: { error in
            guard let error = error as? OfflineError, error.kind == .manifest else { return false }
            return error.message.contains(message) && !error.message.contains("\n")
        }
    }
}
