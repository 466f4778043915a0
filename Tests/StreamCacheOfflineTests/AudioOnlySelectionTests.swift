import Foundation
import StreamCacheDASHModel
import Testing

@testable import StreamCacheHLS
@testable import StreamCacheOfflineCore

/// `download -x`: audio alone, from where each kind of stream keeps it.
@Suite struct AudioOnlySelectionTests {
    static func master(_ text: String) -> MultivariantPlaylist {
        guard case .multivariant(let master) = try? Playlist(parsing: "#EXTM3U\n" + text) else {
            fatalError("not multivariant")
        }
        return master
    }

    static var audioOnly: MediaSelectionCriteria {
        var criteria = MediaSelectionCriteria()
        criteria.audioOnly = true
        return criteria
    }

    @Test func anAudioOnlyVariantIsChosenOverTheVideoOnes() throws {
        let master = Self.master(
            """
            #EXT-X-STREAM-INF:BANDWIDTH=4000000,RESOLUTION=1920x1080,CODECS="avc1.640028,mp4a.40.2"
            hd.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=96000,CODECS="mp4a.40.5"
            low-audio.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=192000,CODECS="mp4a.40.2"
            audio.m3u8
            """
        )
        #expect(try MediaSelection.resolve(master, criteria: Self.audioOnly).variant.uri == "audio.m3u8")
    }

    @Test func anAudioRenditionBecomesTheVariantAndNoVideoIsChosen() throws {
        let master = Self.master(
            """
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",DEFAULT=YES,URI="en.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="Deutsch",LANGUAGE="de",URI="de.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=4000000,RESOLUTION=1920x1080,CODECS="avc1.640028,mp4a.40.2",AUDIO="aud"
            hd.m3u8
            """
        )
        var criteria = Self.audioOnly
        criteria.audio = .only(["deu"])
        let selection = try MediaSelection.resolve(master, criteria: criteria)
        #expect(selection.variant.uri == "de.m3u8")
        #expect(selection.variant.codecs == "mp4a.40.2" && selection.variant.resolution == nil)
        #expect(selection.audio.isEmpty && selection.subtitles.isEmpty)
    }

    @Test func audioInsideTheVideoKeepsTheVariant() throws {
        let master = Self.master(
            """
            #EXT-X-STREAM-INF:BANDWIDTH=4000000,RESOLUTION=1920x1080,CODECS="avc1.640028,mp4a.40.2"
            hd.m3u8
            """
        )
        #expect(try MediaSelection.resolve(master, criteria: Self.audioOnly).variant.uri == "hd.m3u8")
    }
}
