import Foundation
import StreamCacheHLSModel
import Testing

@Suite struct PlaylistParserTests {
    static let fixtureNames = Fixtures.playlists

    @Test func theFixturesAreThere() {
        #expect(Self.fixtureNames.count >= 26)
    }

    @Test(arguments: fixtureNames)
    func everyFixtureParsesAndRoundTrips(name: String) throws {
        let playlist = try Playlist(parsing: try Fixtures.text(name))
        #expect(try Playlist(parsing: playlist.text) == playlist, "\(name)")
    }

    @Test(arguments: RFC8216Examples.all)
    func theRFCExamplesParseAndRoundTrip(text: String) throws {
        let playlist = try Playlist(parsing: text)
        #expect(try Playlist(parsing: playlist.text) == playlist)
    }

    @Test func aSimpleMediaPlaylist() throws {
        guard case .media(let playlist) = try Playlist(parsing: RFC8216Examples.simpleMedia) else {
            Issue.record("not a media playlist")
            return
        }
        #expect(playlist.targetDuration == 10 && playlist.header.version == 3 && playlist.endList)
        #expect(playlist.segments.map(\.uri).last == "http://media.example.com/third.ts")
        #expect(playlist.segments.map(\.duration) == [9.009, 9.009, 3.003])
        #expect(abs(playlist.totalDuration - 21.021) < 1e-9)
    }

    @Test func keysApplyToTheSegmentsThatFollowThemUntilTheNext() throws {
        guard case .media(let playlist) = try Playlist(parsing: RFC8216Examples.encrypted) else {
            Issue.record("not a media playlist")
            return
        }
        #expect(playlist.mediaSequence == 7794)
        #expect(
            playlist.segments.map { $0.key?.uri } == Array(repeating: "https://priv.example.com/key.php?r=52", count: 3)
                + ["https://priv.example.com/key.php?r=53"]
        )
        #expect(playlist.segments.allSatisfy { $0.key?.method == "AES-128" })

        let cleared = try media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXT-X-MAP:URI="init.mp4",BYTERANGE="720@0"
            #EXT-X-KEY:METHOD=AES-128,URI="k1",IV=0x0000000000000000000000000000000A
            #EXTINF:4,
            a.m4s
            #EXT-X-KEY:METHOD=NONE
            #EXTINF:4,
            b.m4s
            #EXT-X-MAP:URI="init2.mp4"
            #EXTINF:4,
            c.m4s
            """
        )
        #expect(cleared.segments.map { $0.key?.uri } == ["k1", nil, nil])
        #expect(cleared.segments[0].key?.iv == "0x0000000000000000000000000000000A")
        #expect(cleared.segments.map { $0.map?.uri } == ["init.mp4", "init.mp4", "init2.mp4"])
        #expect(cleared.segments[0].map?.byteRange == SegmentByteRange(offset: 0, length: 720))
        #expect(try Playlist(parsing: Playlist.media(cleared).text) == .media(cleared))
    }

    @Test func implicitByteRangeOffsetsFollowThePreviousSegment() throws {
        let playlist = try media(try Fixtures.text("grafov/media-playlist-with-byterange.m3u8"))
        #expect(
            playlist.segments.map(\.byteRange) == [
                SegmentByteRange(offset: 0, length: 75232),
                SegmentByteRange(offset: 752321, length: 82112),
                SegmentByteRange(offset: 752321 + 82112, length: 69864),
            ]
        )
        let orphan = #expect(throws: HLSParseError.self) {
            try Playlist(parsing: "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n#EXT-X-BYTERANGE:100\na.ts\n")
        }
        #expect(orphan?.line == 4)
    }

    @Test func multivariantPlaylistsHaveVariantsRenditionsAndIFrames() throws {
        let audio = try multivariant(RFC8216Examples.alternativeAudio)
        #expect(audio.variants.map(\.bandwidth) == [1_280_000, 2_560_000, 7_680_000, 65000])
        #expect(audio.variants.allSatisfy { $0.audio == "aac" })
        #expect(audio.renditions.map(\.language) == ["en", "de", "en"])
        #expect(audio.renditions.map(\.isDefault) == [true, false, false])
        #expect(audio.renditions.map(\.autoselect) == [true, true, false])
        let frames = try multivariant(RFC8216Examples.iFrames)
        #expect(frames.iframeVariants.map(\.uri) == ["low/iframe.m3u8", "mid/iframe.m3u8", "hi/iframe.m3u8"])
        #expect(frames.iframeVariants.map(\.bandwidth) == [86000, 150_000, 550_000])
        let averages = try multivariant(RFC8216Examples.multivariant)
        #expect(averages.variants.map(\.averageBandwidth) == [1_000_000, 2_000_000, 6_000_000, nil])
        let session = try multivariant(RFC8216Examples.sessionData)
        #expect(session.sessionData.map { $0["VALUE"] } == [nil, "This is an example", "Este es un ejemplo"])
    }

    @Test func unknownTagsAndCommentsAreWrittenBackVerbatim() throws {
        let text = try Fixtures.text("grafov/media-playlist-with-custom-tags.m3u8")
        let written = try Playlist(parsing: text).text
        let unknown = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix("#") && !$0.hasPrefix("#EXT-X-") && !$0.hasPrefix("#EXTINF") && $0 != "#EXTM3U" }
        #expect(!unknown.isEmpty)
        for line in unknown { #expect(written.contains(line), "\(line) was lost") }
    }

    @Test func variablesAreSubstitutedFromDefinesQueriesAndImports() throws {
        let parent = try multivariant(
            """
            #EXTM3U
            #EXT-X-DEFINE:NAME="cdn",VALUE="https://cdn.example"
            #EXT-X-DEFINE:QUERYPARAM="token"
            #EXT-X-STREAM-INF:BANDWIDTH=1000
            {$cdn}/low.m3u8?token={$token}
            """,
            url: "https://example.com/master.m3u8?token=abc%20d"
        )
        #expect(parent.variants.map(\.uri) == ["https://cdn.example/low.m3u8?token=abc d"])
        let child = try Playlist(
            parsing: """
                #EXTM3U
                #EXT-X-DEFINE:IMPORT="cdn"
                #EXT-X-TARGETDURATION:2
                #EXT-X-KEY:METHOD=AES-128,URI="{$cdn}/key"
                #EXTINF:2,
                {$cdn}/a.ts
                """,
            imported: ["cdn": "https://cdn.example"]
        )
        guard case .media(let media) = child else { return #expect(Bool(false)) }
        #expect(media.segments.first?.uri == "https://cdn.example/a.ts")
        #expect(media.segments.first?.key?.uri == "https://cdn.example/key")
        #expect(try Playlist(parsing: child.text, imported: ["cdn": "https://cdn.example"]) == child)
        let undefined = #expect(throws: HLSParseError.self) {
            try Playlist(parsing: "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\n{$nowhere}/a.ts\n")
        }
        #expect(undefined?.line == 4)
        #expect(undefined?.reason.contains("nowhere") == true)
    }

    @Test func rewritingURIsReachesEveryURI() throws {
        let text = """
            #EXTM3U
            #EXT-X-SESSION-KEY:METHOD=AES-128,URI="sk"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="en",URI="audio.m3u8"
            #EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="cc",INSTREAM-ID="CC1"
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=1,URI="iframe.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=2,AUDIO="a"
            video.m3u8
            """
        let rewritten = try Playlist(parsing: text).mappingURIs { "/x/" + $0 }.text
        for uri in ["sk", "audio.m3u8", "iframe.m3u8", "video.m3u8"] { #expect(rewritten.contains("/x/\(uri)")) }
        #expect(!rewritten.contains("/x/CC1"))
        let media = try Playlist(parsing: RFC8216Examples.encrypted).mappingURIs { "/x/" + $0 }.text
        #expect(media.contains("URI=\"/x/https://priv.example.com/key.php?r=53\""))
        #expect(media.contains("\n/x/http://media.example.com/fileSequence52-A.ts\n"))
    }

    // MARK: Bad input

    @Test(arguments: [
        ("", 0, "no #EXTM3U"),
        ("#EXTINF:10,\na.ts\n", 1, "#EXTM3U"),
        ("<html>\n", 1, "#EXTM3U"),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000\n", 2, "without a URI"),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n#EXT-X-ENDLIST\n", 3, "without a URI"),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000,CODECS=\"avc1\n", 2, "not closed"),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000,CODECS=\"a\"b\na.m3u8\n", 2, "after the quoted value"),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=99999999999999999999999\na.m3u8\n", 2, "BANDWIDTH"),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=-5\na.m3u8\n", 2, "BANDWIDTH"),
        ("#EXTM3U\n#EXT-X-STREAM-INF:CODECS=\"a\"\na.m3u8\n", 2, "no BANDWIDTH"),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:1e999\n", 2, "TARGETDURATION"),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:1e308,\na.ts\n", 3, "duration"),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:nan,\na.ts\n", 3, "duration"),
        (
            "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-BYTERANGE:5@9223372036854775807\n#EXTINF:1,\na.ts\n", 3,
            "BYTERANGE"
        ),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:10\na.ts\n", 3, "without #EXTINF"),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\na.m3u8\n#EXTINF:10,\nb.ts\n", 4, "cannot appear"),
        ("#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,NAME=\"x\"\n", 2, "GROUP-ID"),
        ("#EXTM3U\n#EXT-X-MEDIA:TYPE=TELETEXT,GROUP-ID=\"g\",NAME=\"x\"\n", 2, "TYPE"),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-KEY:METHOD=AES-128\n", 3, "URI"),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=12\n", 3, "IV"),
        ("#EXTM3U\n#EXT-X-DEFINE:NAME=\"a\",VALUE=\"1\"\n#EXT-X-DEFINE:NAME=\"a\",VALUE=\"2\"\n", 3, "twice"),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,RESOLUTION=axb\na.m3u8\n", 2, "RESOLUTION"),
        ("#EXTM3U\n#EXT-X-VERSION:abc\n", 2, "VERSION"),
    ])
    func badPlaylistsNameTheLineAndTheReason(text: String, line: Int, reason: String) {
        let error = #expect(throws: HLSParseError.self) { try Playlist(parsing: text) }
        #expect(error?.line == line, "\(text.debugDescription): \(String(describing: error))")
        #expect(error?.reason.contains(reason) == true, "\(text.debugDescription): \(String(describing: error))")
    }

    @Test func tenMegabytesOfGarbageFailFastOnTheFirstLine() {
        var generator = SeededGenerator(seed: 7)
        let bytes = [UInt8](unsafeUninitializedCapacity: 10_000_000) { buffer, count in
            for index in stride(from: 0, to: buffer.count, by: 8) {
                withUnsafeBytes(of: generator.next()) { word in
                    for offset in 0..<min(8, buffer.count - index) { buffer[index + offset] = word[offset] }
                }
            }
            count = buffer.count
        }
        let error = #expect(throws: HLSParseError.self) { try Playlist(parsing: bytes) }
        #expect(error?.line == 1)
        let late = Array("#EXTM3U\n#EXT-X-TARGETDURATION:1\n".utf8) + bytes
        #expect(throws: HLSParseError(line: 3, "not UTF-8 text, so not a playlist")) { try Playlist(parsing: late) }
        // Garbage after a valid first line fails on the first line that is not a playlist line.
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n" + String(repeating: "garbage garbage\n", count: 600_000)
        let lines = #expect(throws: HLSParseError.self) { try Playlist(parsing: text) }
        #expect(lines?.line == 3)
    }

    @Test func aSelfReferencingPlaylistIsJustAPlaylist() throws {
        let playlist = try multivariant("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nmaster.m3u8\n")
        #expect(playlist.variants.map(\.uri) == ["master.m3u8"])
    }

    // MARK: Helpers

    private func media(_ text: String) throws -> MediaPlaylist {
        guard case .media(let playlist) = try Playlist(parsing: text) else { throw HLSParseError(line: 0, "not media") }
        return playlist
    }

    private func multivariant(_ text: String, url: String? = nil) throws -> MultivariantPlaylist {
        guard case .multivariant(let playlist) = try Playlist(parsing: text, url: url) else {
            throw HLSParseError(line: 0, "not multivariant")
        }
        return playlist
    }
}

/// A small deterministic random generator (SplitMix64) for seeded test cases.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
