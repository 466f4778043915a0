import Foundation
import Testing

@testable import StreamCacheHLS
@testable import StreamCacheOfflineCore

/// What an HLS package plan fetches and how it rewrites playlists: local relative URIs, byte ranges
/// split into files, one file per key and init section, gaps kept and never fetched, only the
/// chosen renditions; and what it refuses.
@Suite struct HLSPackagePlanTests {
    static let base = URL(string: "https://cdn.example/show/")!

    /// The plan of a package made from the one media playlist `playlist` at `url`.
    static func plan(
        _ playlist: MediaPlaylist,
        at url: URL,
        keepingEncryption: Bool = false
    ) throws(OfflineError) -> HLSPackagePlan {
        try HLSPackagePlan(
            multivariant: nil,
            selection: nil,
            media: [HLSPackagePlan.Media(kind: .video, rendition: nil, url: url, playlist: playlist)],
            keepingEncryption: keepingEncryption
        )
    }

    static func media(_ text: String) throws -> MediaPlaylist {
        guard case .media(let playlist) = try Playlist(parsing: text) else { throw HLSParseError(line: 0, "not media") }
        return playlist
    }

    @Test func byteRangesKeysMapsAndGapsBecomeLocalFiles() throws {
        let playlist = try Self.media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXT-X-MAP:URI="main.mp4",BYTERANGE="700@0"
            #EXT-X-KEY:METHOD=AES-128,URI="https://keys.example/k1",IV=0x01
            #EXTINF:4,
            #EXT-X-BYTERANGE:1000@700
            main.mp4
            #EXTINF:4,
            #EXT-X-BYTERANGE:1200
            main.mp4
            #EXT-X-GAP
            #EXTINF:4,
            #EXT-X-BYTERANGE:900
            main.mp4
            #EXTINF:4,
            #EXT-X-BYTERANGE:800
            main.mp4
            #EXT-X-ENDLIST
            """
        )
        let url = Self.base.appendingPathComponent("video.m3u8")
        let plan = try Self.plan(playlist, at: url, keepingEncryption: true)
        #expect(plan.entryPoint == "master.m3u8")
        #expect(plan.playlists["master.m3u8"] == "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1858\nvideo/index.m3u8\n")
        #expect(plan.items.map(\.kind) == [.key, .initialization, .segment, .segment, .segment])
        #expect(
            plan.items.map(\.path) == [
                "video/key0.key", "video/init0.mp4", "video/00000.mp4", "video/00001.mp4", "video/00003.mp4",
            ]
        )
        #expect(plan.items.map(\.offset) == [nil, 0, 700, 1700, 3800])
        #expect(plan.items.map(\.length) == [nil, 700, 1000, 1200, 800])
        #expect(plan.items[0].url == "https://keys.example/k1")
        #expect(plan.items.map(\.start) == [0, 0, 0, 4, 12])
        // The byte ranges, and 16 bytes for the key; no file needs its length asked for.
        #expect(plan.estimatedBytes == 3716 && plan.sizeProbes.isEmpty)
        let text = try #require(plan.playlists["video/index.m3u8"])
        #expect(text.contains("#EXT-X-MAP:URI=\"init0.mp4\"\n"))
        #expect(text.contains("#EXT-X-KEY:METHOD=AES-128,URI=\"key0.key\",IV=0x01"))
        #expect(!text.contains("BYTERANGE") && !text.contains("https://"))
        #expect(text.contains("#EXT-X-GAP\n#EXTINF:4,\n00002.mp4"))
        #expect(text.contains("#EXT-X-PLAYLIST-TYPE:VOD") && text.hasSuffix("#EXT-X-ENDLIST\n"))
    }

    /// By default AES-128 files carry their key's URL and IV (the `IV` attribute, else the media
    /// sequence number) to be decrypted into the package, and its playlist names no key.
    @Test func aes128FilesAreDecryptedIntoThePackage() throws {
        let playlist = try Self.media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXT-X-MEDIA-SEQUENCE:7
            #EXT-X-KEY:METHOD=AES-128,URI="k1"
            #EXT-X-MAP:URI="init.mp4"
            #EXTINF:4,
            a.m4s
            #EXT-X-KEY:METHOD=AES-128,URI="k2",IV=0X0102
            #EXTINF:4,
            b.m4s
            #EXT-X-KEY:METHOD=NONE
            #EXTINF:4,
            c.m4s
            #EXT-X-ENDLIST
            """
        )
        let url = Self.base.appendingPathComponent("video.m3u8")
        let plan = try Self.plan(playlist, at: url)
        #expect(plan.items.map(\.kind) == [.initialization, .segment, .segment, .segment])
        let k1 = Self.base.appendingPathComponent("k1").absoluteString
        let k2 = Self.base.appendingPathComponent("k2").absoluteString
        let sequence7 = String(repeating: "0", count: 31) + "7"
        #expect(
            plan.items.map(\.decryption) == [
                Decryption(key: k1, iv: sequence7), Decryption(key: k1, iv: sequence7),
                Decryption(key: k2, iv: String(repeating: "0", count: 28) + "0102"), nil,
            ]
        )
        #expect(Decryption(key: k1, iv: sequence7).ivBytes == Array(repeating: 0, count: 15) + [7])
        let text = try #require(plan.playlists["video/index.m3u8"])
        #expect(!text.contains("EXT-X-KEY"), "\(text)")
    }

    /// Without byte ranges, a sample of segments spread over the rendition gives its bytes per
    /// second; the variant's bit rate counts only while no sample is known.
    @Test func theEstimateComesFromASampleOfSegments() throws {
        var lines = ["#EXTM3U", "#EXT-X-TARGETDURATION:4", "#EXT-X-MAP:URI=\"init.mp4\""]
        for index in 0..<30 { lines += ["#EXTINF:\(index == 29 ? 2 : 4),", "s\(index).m4s"] }
        let playlist = try Self.media((lines + ["#EXT-X-ENDLIST"]).joined(separator: "\n"))
        let url = Self.base.appendingPathComponent("video.m3u8")
        var plan = try Self.plan(playlist, at: url)
        #expect(plan.estimatedBytes == nil)
        #expect(plan.playlists["master.m3u8"]?.contains("BANDWIDTH=1000000") == true)
        let probes = plan.sizeProbes
        let segments = probes.filter { $0.hasSuffix(".m4s") }
        #expect(probes.first == Self.base.appendingPathComponent("init.mp4").absoluteString)
        #expect(segments.count == SizeEstimate.samplesPerRendition)
        #expect(segments.first?.hasSuffix("/s0.m4s") == true && segments.last?.hasSuffix("/s29.m4s") == true)
        // 1,000 bytes a second in every sampled segment (the last is 2 s long), a 500-byte init.
        var lengths: [String: Int64] = [:]
        for probe in segments { lengths[probe] = probe.hasSuffix("/s29.m4s") ? 2000 : 4000 }
        lengths[probes[0]] = 500
        plan.estimate(lengths: lengths)
        let estimate = try #require(plan.estimatedBytes)
        #expect(estimate == 118_500, "\(estimate)")
        // The entry point's BANDWIDTH follows: 118,500 bytes in 118 s.
        #expect(plan.playlists["master.m3u8"]?.contains("BANDWIDTH=8033\n") == true)
    }

    @Test func theMultivariantPlaylistKeepsOnlyWhatWasChosen() throws {
        guard
            case .multivariant(let master) = try Playlist(
                parsing: """
                    #EXTM3U
                    #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="English",LANGUAGE="en",DEFAULT=YES,URI="en.m3u8"
                    #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="Deutsch",LANGUAGE="de",URI="de.m3u8"
                    #EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="s",NAME="Français",LANGUAGE="fr",URI="fr.m3u8"
                    #EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="CC",INSTREAM-ID="CC1"
                    #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=100000,URI="iframes.m3u8"
                    #EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,AUDIO="a",SUBTITLES="s",CLOSED-CAPTIONS="cc"
                    low.m3u8
                    #EXT-X-STREAM-INF:BANDWIDTH=3000000,RESOLUTION=1280x720,AUDIO="a",SUBTITLES="s",CLOSED-CAPTIONS="cc"
                    high.m3u8
                    """
            )
        else { throw HLSParseError(line: 0, "not multivariant") }
        let criteria = MediaSelectionCriteria(bitrate: .atMost(1_000_000), audio: .only(["de"]), subtitles: .none)
        let selection = try MediaSelection.resolve(master, criteria: criteria)
        #expect(selection.variant.uri == "low.m3u8" && selection.audio.map(\.name) == ["Deutsch"])
        let vod = try Self.media("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\na.ts\n#EXT-X-ENDLIST\n")
        let plan = try HLSPackagePlan(
            multivariant: master,
            selection: selection,
            media: [
                HLSPackagePlan.Media(
                    kind: .video,
                    rendition: nil,
                    url: Self.base.appendingPathComponent("low.m3u8"),
                    playlist: vod
                ),
                HLSPackagePlan.Media(
                    kind: .audio,
                    rendition: selection.audio[0],
                    url: Self.base.appendingPathComponent("de.m3u8"),
                    playlist: vod
                ),
            ]
        )
        #expect(plan.estimatedBytes == 200_000)
        let text = try #require(plan.playlists["master.m3u8"])
        let lines = text.split(separator: "\n").map(String.init)
        #expect(
            lines.filter { $0.hasPrefix("#EXT-X-MEDIA") } == [
                "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"Deutsch\",LANGUAGE=\"de\",URI=\"audio-de/index.m3u8\",DEFAULT=YES,AUTOSELECT=YES",
                "#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID=\"cc\",NAME=\"CC\",INSTREAM-ID=\"CC1\"",
            ]
        )
        #expect(
            lines.filter { $0.hasPrefix("#EXT-X-STREAM-INF") } == [
                "#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,AUDIO=\"a\",CLOSED-CAPTIONS=\"cc\""
            ]
        )
        #expect(lines.last == "video/index.m3u8" && !text.contains("I-FRAME"))
    }

    @Test(arguments: [
        ("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\na.ts\n", OfflineError.Kind.live),
        (
            "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"k\"\n#EXTINF:2,\na.ts\n#EXT-X-ENDLIST\n",
            .drm
        ),
        (
            "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-KEY:METHOD=AES-128,URI=\"k\",KEYFORMAT=\"x\"\n#EXTINF:2,\na.ts\n#EXT-X-ENDLIST\n",
            .drm
        ),
    ])
    func refusesWhatCannotPlayOffline(text: String, kind: OfflineError.Kind) throws {
        let playlist = try Self.media(text)
        #expect(throws: OfflineError.self) {
            _ = try Self.plan(playlist, at: Self.base)
        }
        do {
            _ = try Self.plan(playlist, at: Self.base)
        } catch {
            #expect(error.kind == kind)
        }
    }
}

/// Apple's variant qualifiers: a codec or a dynamic range the device cannot play is skipped.
@Suite struct VariantQualifierTests {
    static let master: MultivariantPlaylist = {
        let text = """
            #EXTM3U
            #EXT-X-STREAM-INF:BANDWIDTH=9000000,RESOLUTION=3840x2160,CODECS="dvh1.05.06,ec-3",VIDEO-RANGE=PQ
            dv.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=6000000,RESOLUTION=1920x1080,CODECS="hvc1.2.4.L123.B0,mp4a.40.2",VIDEO-RANGE=HLG
            hevc-hdr.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=5000000,RESOLUTION=1920x1080,CODECS="hvc1.1.6.L120.90,mp4a.40.2",VIDEO-RANGE=SDR
            hevc.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=4000000,RESOLUTION=1920x1080,CODECS="avc1.640028,mp4a.40.2"
            avc.m3u8
            """
        guard case .multivariant(let master) = try? Playlist(parsing: text) else { fatalError("not multivariant") }
        return master
    }()

    @Test(arguments: [
        (MediaSelectionCriteria(), "dv.m3u8"),
        (MediaSelectionCriteria(videoRanges: .sdrOnly), "hevc.m3u8"),
        (MediaSelectionCriteria(excludedCodecs: ["dvh1"]), "hevc-hdr.m3u8"),
        (MediaSelectionCriteria(excludedCodecs: ["HVC1", "hev1", "dvh1"]), "avc.m3u8"),
        (MediaSelectionCriteria(excludedCodecs: ["hvc1", "dvh1"], videoRanges: .sdrOnly), "avc.m3u8"),
    ])
    func theHighestVariantTheDeviceCanPlayIsChosen(criteria: MediaSelectionCriteria, expected: String) throws {
        #expect(try MediaSelection.resolve(Self.master, criteria: criteria).variant.uri == expected)
    }

    @Test func noPlayableVariantSaysWhatThereIs() {
        let criteria = MediaSelectionCriteria(excludedCodecs: ["hvc1", "dvh1", "avc1"])
        let error = #expect(throws: OfflineError.self) { try MediaSelection.resolve(Self.master, criteria: criteria) }
        #expect("\(error.map { "\($0)" } ?? "")".contains("avc1.640028"))
    }
}
