import Foundation
import Testing

@testable import StreamCache

/// Which manifest a resource is: its media type, then its first bytes where the type says nothing,
/// then its path.
@Suite struct ManifestKindTests {
    static let mpd = Array(
        "\u{FEFF}<?xml version=\"1.0\"?>\n<!-- made by hand -->\n<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\">".utf8
    )
    static let playlist = Array("\n#EXTM3U\n#EXT-X-VERSION:3\n".utf8)

    @Test(
        arguments: [
            // The type decides whatever the path says.
            ("http://o/a.m3u8", "application/dash+xml", nil, ManifestKind.dash),
            ("http://o/a.mpd", "application/vnd.apple.mpegurl; charset=utf-8", nil, .hls),
            // A generic type leaves it to the bytes, then to the path.
            ("http://o/manifest?id=7", "application/octet-stream", mpd, .dash),
            ("http://o/manifest?id=7", nil, playlist, .hls),
            ("http://o/x.m3u8", "text/plain", Array("plain text".utf8), .hls),
            ("http://o/x.mpd", "application/xml", nil, .dash),
            ("http://o/%78.mpd", "", nil, .dash),
        ] as [(String, String?, [UInt8]?, ManifestKind)]
    )
    func aManifestIsKnownByTypeThenBytesThenPath(url: String, type: String?, bytes: [UInt8]?, kind: ManifestKind) throws
    {
        #expect(ManifestKind.of(url: try #require(URL(string: url)), contentType: type, firstBytes: bytes) == kind)
    }

    @Test(
        arguments: [
            // A media type of its own is no manifest, whatever the path or the bytes.
            ("http://o/a.m3u8", "video/mp4", playlist),
            // A playlist is never XML.
            ("http://o/a.m3u8", "application/xml", nil),
            ("http://o/segment.ts", nil, Array("G@\u{0}".utf8)),
            ("http://o/page", "application/octet-stream", Array("<html><MPD>".utf8)),
        ] as [(String, String?, [UInt8]?)]
    )
    func whatNothingNamesIsNoManifest(url: String, type: String?, bytes: [UInt8]?) throws {
        #expect(ManifestKind.of(url: try #require(URL(string: url)), contentType: type, firstBytes: bytes) == nil)
    }
}
