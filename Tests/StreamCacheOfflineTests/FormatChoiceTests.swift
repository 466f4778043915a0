import Foundation
import StreamCacheDASHModel
import Testing

@testable import StreamCacheDASH
@testable import StreamCacheHLS
@testable import StreamCacheOfflineCore

/// `download -f`: tracks named by the ids `-F` lists, the same ids for HLS and DASH.
@Suite struct FormatChoiceTests {
    @Test(arguments: [
        ("v2", FormatChoice(video: 1)),
        ("v1+a2+s1", FormatChoice(video: 0, audio: [1], subtitles: [0])),
        ("A1,a3", FormatChoice(audio: [0, 2])),
    ])
    func idsAreRead(text: String, expected: FormatChoice) {
        #expect(FormatChoice(parsing: text) == expected)
    }

    @Test(arguments: ["", "v", "v0", "x1", "v1+v2", "v-1", "v1++", "v9999999", "best"])
    func whatIsNoIdIsRefused(text: String) {
        #expect(FormatChoice(parsing: text) == nil)
    }

    static let master: MultivariantPlaylist = {
        let text = """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="hi",NAME="English",LANGUAGE="en",DEFAULT=YES,URI="hi-en.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="hi",NAME="Deutsch",LANGUAGE="de",URI="hi-de.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="lo",NAME="English",LANGUAGE="en",DEFAULT=YES,URI="lo-en.m3u8"
            #EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English",LANGUAGE="en",URI="subs-en.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=4000000,RESOLUTION=1920x1080,AUDIO="hi",SUBTITLES="subs"
            hd.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,AUDIO="lo",SUBTITLES="subs"
            sd.m3u8
            """
        guard case .multivariant(let master) = try? Playlist(parsing: text) else { fatalError("not multivariant") }
        return master
    }()

    static func criteria(_ ids: String) -> MediaSelectionCriteria {
        var criteria = MediaSelectionCriteria()
        criteria.formats = FormatChoice(parsing: ids)
        return criteria
    }

    @Test func hlsVariantsAndRenditionsAreChosenByTheirIds() throws {
        let lower = try MediaSelection.resolve(Self.master, criteria: Self.criteria("v2"))
        #expect(lower.variant.uri == "sd.m3u8")
        #expect(lower.audio.map(\.uri) == ["lo-en.m3u8"], "audio not named: the variant's default")
        let named = try MediaSelection.resolve(Self.master, criteria: Self.criteria("v1+a2+s1"))
        #expect(named.variant.uri == "hd.m3u8")
        #expect(named.audio.map(\.uri) == ["hi-de.m3u8"])
        #expect(named.subtitles.map(\.uri) == ["subs-en.m3u8"])
    }

    @Test(arguments: [
        ("v3", "no format v3; the video formats are v1…v2"),
        ("v2+a1", "format a1 is in group hi, and the variant plays group lo"),
        ("v1+s4", "no format s4; the subtitle formats are s1…s1"),
    ])
    func anIdThatCannotBeChosenSaysWhatCan(ids: String, says: String) {
        let error = #expect(throws: OfflineError.self) {
            try MediaSelection.resolve(Self.master, criteria: Self.criteria(ids))
        }
        #expect(error?.message.contains(says) == true, "\(String(describing: error))")
    }

    static let representations: [DASHRepresentation] = {
        let text = """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT8S">
              <Period>
                <AdaptationSet contentType="video" mimeType="video/mp4">
                  <SegmentTemplate media="$RepresentationID$-$Number$.m4s" initialization="$RepresentationID$-init.mp4" duration="2" />
                  <Representation id="hd" bandwidth="4000000" width="1920" height="1080" />
                  <Representation id="sd" bandwidth="800000" width="640" height="360" />
                </AdaptationSet>
                <AdaptationSet contentType="audio" mimeType="audio/mp4" lang="en">
                  <SegmentTemplate media="$RepresentationID$-$Number$.m4s" initialization="$RepresentationID$-init.mp4" duration="2" />
                  <Representation id="en-128" bandwidth="128000" />
                  <Representation id="en-64" bandwidth="64000" />
                </AdaptationSet>
                <AdaptationSet contentType="audio" mimeType="audio/mp4" lang="de">
                  <SegmentTemplate media="$RepresentationID$-$Number$.m4s" initialization="$RepresentationID$-init.mp4" duration="2" />
                  <Representation id="de-128" bandwidth="128000" />
                </AdaptationSet>
              </Period>
            </MPD>
            """
        let url = URL(string: "http://example.com/show/manifest.mpd")!
        guard let presentation = try? MediaPresentation(parsing: Array(text.utf8)) else { fatalError("not an MPD") }
        return presentation.representations(documentURL: url)
    }()

    @Test(arguments: [
        ("v2", ["sd", "en-128"]),
        ("v1+a2", ["hd", "en-64"]),
        ("a3", ["de-128"]),
        ("v2+a1+a3", ["sd", "en-128", "de-128"]),
    ])
    func dashRepresentationsAreChosenByTheSameIds(ids: String, expected: [String]) throws {
        let chosen = try DASHPackagePlanner.choose(
            from: Self.representations,
            criteria: Self.criteria(ids),
            url: URL(string: "http://example.com/show/manifest.mpd")!
        )
        #expect(chosen.map(\.id) == expected)
    }

    @Test func aDASHIdPastTheEndSaysWhatThereIs() {
        let error = #expect(throws: OfflineError.self) {
            try DASHPackagePlanner.choose(
                from: Self.representations,
                criteria: Self.criteria("v1+a4"),
                url: URL(string: "http://example.com/show/manifest.mpd")!
            )
        }
        #expect(error?.message.contains("no format a4; the audio formats are a1…a3") == true)
    }
}
