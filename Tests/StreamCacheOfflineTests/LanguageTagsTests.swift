import Foundation
import StreamCacheDASHModel
import Testing

@testable import StreamCacheDASH
@testable import StreamCacheHLS
@testable import StreamCacheHLSModel
@testable import StreamCacheOfflineCore

/// One language, however it is written: the tags a user gives (`en`, `eng`, `en-US`) match the
/// same tracks, tagged either way, in HLS and DASH alike.
@Suite struct LanguageTagsTests {
    @Test(arguments: [
        ("en", "eng", true), ("eng", "en-US", true), ("en-US", "EN_gb", true), ("de", "ger", true),
        ("deu", "de-AT", true), ("fre", "fra", true), ("zh-Hant", "chi", true), ("pt-BR", "por", true),
        ("e", "en", false), ("en", "es", false), ("de", "deu-x", true), ("", "en", false), ("12", "12", false),
        ("qaa", "qaa", true),
    ])
    func tagsNameOneLanguageWhateverTheirForm(tag: String, wanted: String, same: Bool) {
        #expect(LanguageTags.sameLanguage(tag, wanted) == same)
        #expect(LanguageTags.sameLanguage(wanted, tag) == same)
    }

    /// An HLS selection by any form of the tag picks the same rendition.
    @Test(arguments: ["de", "deu", "ger", "de-DE"])
    func anHLSSelectionTakesEveryFormOfATag(wanted: String) throws {
        guard
            case .multivariant(let master) = try Playlist(
                parsing: """
                    #EXTM3U
                    #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="English",LANGUAGE="en",DEFAULT=YES,URI="en.m3u8"
                    #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="Deutsch",LANGUAGE="deu",URI="de.m3u8"
                    #EXT-X-STREAM-INF:BANDWIDTH=800000,AUDIO="a"
                    low.m3u8
                    """
            )
        else { throw HLSParseError(line: 0, "not multivariant") }
        let criteria = MediaSelectionCriteria(audio: .only([wanted]), subtitles: .none)
        let selection = try MediaSelection.resolve(master, criteria: criteria)
        #expect(selection.audio.map(\.name) == ["Deutsch"])
    }

    /// A DASH selection by any form of the tag picks the same representation.
    @Test(arguments: ["en", "eng", "en-US", "EN"])
    func aDASHSelectionTakesEveryFormOfATag(wanted: String) throws {
        let text = """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT4S">
              <Period>
                <AdaptationSet contentType="audio" mimeType="audio/mp4" lang="de">
                  <Representation id="de" bandwidth="128000"><BaseURL>de.mp4</BaseURL></Representation>
                </AdaptationSet>
                <AdaptationSet contentType="audio" mimeType="audio/mp4" lang="eng">
                  <Representation id="en" bandwidth="128000"><BaseURL>en.mp4</BaseURL></Representation>
                </AdaptationSet>
              </Period>
            </MPD>
            """
        let url = try #require(URL(string: "http://example.com/show/manifest.mpd"))
        let representations = try MediaPresentation(parsing: Array(text.utf8)).representations(documentURL: url)
        let criteria = MediaSelectionCriteria(audio: .only([wanted]), subtitles: .none)
        let chosen = try DASHPackagePlanner.choose(from: representations, criteria: criteria, url: url)
        #expect(chosen.map(\.id) == ["en"])
    }
}
