import Foundation
import StreamCacheDASHModel
import StreamCacheTesting
import Testing

/// `streamcache download` of an MPD of several periods, as a programme with an advertisement
/// inserted in another codec is published: one package of the same periods, each period's files
/// the origin's bytes and playing frame for frame; served with the origin stopped; `-o` joins
/// periods of the same codecs into one file and refuses others in one line, keeping the package.
@Suite(.timeLimit(.minutes(3))) struct SeveralPeriodsTests {
    /// ffmpeg's DASH presentations `main` (H.264 320x240, 8 s) and `ad` (MPEG-4 Part 2 160x120,
    /// 4 s) in `folder`, and an MPD of `periods` of them, each under a `BaseURL` of its folder, at
    /// `name`.
    static func make(in folder: String, name: String, periods: [(source: String, seconds: Int)]) async throws {
        let sources: [(String, [String])] = [
            ("main", ["testsrc=size=320x240:rate=10:duration=8", "sine=frequency=440:duration=8", "libx264"]),
            ("ad", ["smptebars=size=160x120:rate=10:duration=4", "sine=frequency=880:duration=4", "mpeg4"]),
        ]
        for (source, inputs) in sources where !FileManager.default.fileExists(atPath: folder + "/" + source) {
            try FileManager.default.createDirectory(atPath: folder + "/" + source, withIntermediateDirectories: true)
            let made = try await Tool.run(
                "ffmpeg",
                [
                    "-hide_banner", "-v", "error", "-f", "lavfi", "-i", inputs[0], "-f", "lavfi", "-i", inputs[1],
                    "-c:v", inputs[2], "-g", "10", "-c:a", "aac", "-f", "dash", "-seg_duration", "2",
                    folder + "/" + source + "/manifest.mpd",
                ]
            )
            try #require(made.status == 0, "\(made.stderr)")
        }
        var start = 0
        var text = """
            <?xml version="1.0"?>
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" \
            type="static" mediaPresentationDuration="PT\(periods.map(\.seconds).reduce(0, +))S" minBufferTime="PT4S">

            """
        for (index, period) in periods.enumerated() {
            let own = try String(contentsOfFile: folder + "/" + period.source + "/manifest.mpd", encoding: .utf8)
            let sets = try #require(own.firstRange(of: "<AdaptationSet")?.lowerBound)
            let end = try #require(own.firstRange(of: "</Period>")?.lowerBound)
            text += "<Period id=\"p\(index)\" start=\"PT\(start)S\"><BaseURL>\(period.source)/</BaseURL>"
            text += own[sets..<end] + "</Period>\n"
            start += period.seconds
        }
        try (text + "</MPD>\n").write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
    }

    /// The video frames' checksums of `source`'s video, its origin files end to end.
    static func originFrames(_ folder: String, _ source: String) async throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder + "/" + source).sorted()
        var joined = Data()
        for name in names.filter({ $0 == "init-stream0.m4s" }) + names.filter({ $0.hasPrefix("chunk-stream0-") }) {
            joined += try Data(contentsOf: URL(fileURLWithPath: folder + "/" + source + "/" + name))
        }
        let reference = folder + "/" + source + "-video.mp4"
        try joined.write(to: URL(fileURLWithPath: reference))
        return try await checksums(reference)
    }

    /// The checksum of each frame of the first video stream of `url`, without its timestamps
    /// (a joined file's go on where the period before ended).
    static func checksums(_ url: String) async throws -> [String] {
        try await DASHThroughServeTests.frames(url, map: "0:v:0").map { String($0.split(separator: ",").last ?? "") }
    }

    /// The MPD at `path` cut to its period `index` alone, written beside it.
    static func period(_ index: Int, of path: String) throws -> String {
        var root = try MediaPresentation(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: path)))).root
        let period = root.elements("Period")[index]
        root.children = [.element(period)]
        root.attributes["mediaPresentationDuration"] = period.attributes["duration"]
        let alone = (path as NSString).deletingLastPathComponent + "/period-\(index + 1).mpd"
        try root.xml().write(toFile: alone, atomically: true, encoding: .utf8)
        return alone
    }

    @Test func eachPeriodIsKeptAndPlaysFromDiskAndThroughServeOffline() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/dash"
        try await Self.make(in: folder, name: "show.mpd", periods: [("main", 8), ("ad", 4), ("main", 8)])
        let result = try await setup.download("dash/show.mpd", [], command: ["download"])
        try #require(result.status == 0, "\(result.stderr)")
        let id = try #require(result.output.split(separator: "\n").last.map { String($0) })
        let entry = setup.library + "/" + id + "/manifest.mpd"
        let local = try MediaPresentation(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: entry))))
        let periods = try local.periods()
        #expect(periods.map(\.start) == [0, 8, 12] && periods.map(\.duration) == [8, 4, 8])

        let main = try await Self.originFrames(folder, "main")
        let ad = try await Self.originFrames(folder, "ad")
        #expect(main.count == 80 && ad.count == 40)
        for (index, expected) in [main, ad, main].enumerated() {
            let played = try await Self.checksums(try Self.period(index, of: entry))
            #expect(played == expected, "period \(index + 1) from disk: \(played.count) frames")
        }
        let assets = try await setup.assets()
        #expect(assets.first?.state == "complete")

        _ = try await setup.origin.end(with: SIGKILL)
        let proxy = try await ListeningProcess(["serve"], cacheDir: setup.workspace.cacheDirectory)
        let served = try await Curl.fetch(proxy.url("offline/\(id)/manifest.mpd"))
        let onDisk = try Data(contentsOf: URL(fileURLWithPath: entry))
        #expect(served.status == 200 && served.body == onDisk)
        // ffmpeg plays an MPD's first period; the other periods' files are fetched as a player
        // of every period would.
        #expect(try await Self.checksums(proxy.url("offline/\(id)/manifest.mpd")) == main)
        for representation in local.representations(documentURL: URL(string: proxy.url("offline/\(id)/manifest.mpd"))!)
        where representation.period > 0 {
            let initialization = try await Curl.fetch(representation.baseURL.absoluteString + "init.mp4")
            let last = try await Curl.fetch(representation.baseURL.absoluteString + "00002.m4s")
            #expect(initialization.status == 200 && last.status == 200, "\(representation.baseURL)")
        }
    }

    /// `-F` counts each kind within its period, as `-f` takes the ids: `-f v1+a1` keeps the
    /// first video and audio of every period.
    @Test func formatIdsCountWithinEachPeriod() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/dash"
        try await Self.make(in: folder, name: "show.mpd", periods: [("main", 8), ("ad", 4), ("main", 8)])
        let listed = try await setup.download("dash/show.mpd", ["-F"], command: ["download"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let videos = listed.output.split(separator: "\n").filter { $0.hasPrefix("v") }
        #expect(videos.count == 3 && videos.allSatisfy { $0.hasPrefix("v1 ") }, "\(listed.output)")
        #expect(videos.enumerated().allSatisfy { $0.element.hasSuffix("period=\($0.offset + 1)") })
        let chosen = try await setup.download("dash/show.mpd", ["-f", "v1+a1"], command: ["download"])
        #expect(chosen.status == 0, "\(chosen.stderr)")
        let id = try #require(chosen.output.split(separator: "\n").last.map { String($0) })
        let folders = try FileManager.default.contentsOfDirectory(atPath: setup.library + "/" + id).filter {
            !$0.contains(".")
        }
        #expect(Set(folders) == ["p1-video", "p1-audio-und", "p2-video", "p2-audio-und", "p3-video", "p3-audio-und"])
    }

    @Test func oneFileJoinsPeriodsOfTheSameCodecsAndRefusesOthers() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/dash"
        try await Self.make(in: folder, name: "two.mpd", periods: [("main", 8), ("main", 8)])
        try await Self.make(in: folder, name: "show.mpd", periods: [("main", 8), ("ad", 4), ("main", 8)])
        let output = setup.workspace.outputDirectory

        let joined = try await setup.download("dash/two.mpd", ["-o", output + "/two.mp4"], command: ["download"])
        #expect(joined.status == 0, "\(joined.stderr)")
        let main = try await Self.originFrames(folder, "main")
        #expect(try await Self.checksums(output + "/two.mp4") == main + main)

        let refused = try await setup.download("dash/show.mpd", ["-o", output + "/show.mp4"], command: ["download"])
        #expect(refused.status != 0)
        let errors = refused.stderr.split(separator: "\n").filter { $0.contains("error") }
        #expect(
            errors.count == 1 && errors[0].contains("period 2 holds") && errors[0].contains("mp4v.20 160x120"),
            "\(refused.stderr)"
        )
        #expect(!FileManager.default.fileExists(atPath: output + "/show.mp4"))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: output).filter { $0 != "two.mp4" }
        #expect(leftovers.isEmpty, "\(leftovers)")
        #expect(try await setup.assets().contains { $0.state == "complete" && $0.url.hasSuffix("show.mpd") })
    }

    /// GPAC's MPD of two periods from the RxPlayer's tests (the same representation ids in both,
    /// no `start`s, the second period numbered on from 13 under a `presentationTimeOffset`, one
    /// initialization segment for both), served with 240 s of ffmpeg's media under its names:
    /// each period keeps its own segments, the shared initialization segment is fetched once.
    @Test func aThirdPartyMPDOfTwoPeriodsIsKeptPeriodByPeriod() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/gpac"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let made = try await Tool.run(
            "ffmpeg",
            [
                "-hide_banner", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x180:rate=25:duration=240",
                "-f", "lavfi", "-i", "sine=frequency=440:duration=250:sample_rate=44100", "-c:v", "libx264",
                "-preset", "ultrafast", "-g", "250", "-c:a", "aac", "-ac", "1", "-f", "dash", "-seg_duration", "10",
                "-use_timeline", "0", folder + "/ffmpeg.mpd",
            ]
        )
        try #require(made.status == 0, "\(made.stderr)")
        // The audio's segments last 440029/44100 s, so each period lists 13: ffmpeg's 10 s
        // segments of 250 s stand in for them.
        for (stream, id, count) in [("0", "h264bl_low", 24), ("1", "aaclc", 25)] {
            try FileManager.default.moveItem(
                atPath: folder + "/init-stream\(stream).m4s",
                toPath: folder + "/mp4-live-periods-\(id)-.mp4"
            )
            for number in 1...count {
                try FileManager.default.moveItem(
                    atPath: folder + String(format: "/chunk-stream%@-%05d.m4s", stream, number),
                    toPath: folder + "/mp4-live-periods-\(id)-\(number).m4s"
                )
            }
        }
        try FileManager.default.copyItem(
            atPath: Fixtures.path("dash/rxplayer/mp4-live-periods-mpd.mpd"),
            toPath: folder + "/manifest.mpd"
        )

        let result = try await setup.download("gpac/manifest.mpd", ["--max-bitrate", "60k"], command: ["download"])
        try #require(result.status == 0, "\(result.stderr)")
        let id = try #require(result.output.split(separator: "\n").last.map { String($0) })
        let package = setup.library + "/" + id
        let periods = try MediaPresentation(
            parsing: Array(try Data(contentsOf: URL(fileURLWithPath: package + "/manifest.mpd")))
        ).periods()
        #expect(periods.map(\.start) == [0, 120] && periods.map(\.duration) == [120, 120])
        func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }
        for (period, numbers) in [("p1", 1...13), ("p2", 13...25)] {
            let initialization = try bytes(package + "/\(period)-video/init.mp4")
            #expect(initialization == (try bytes(folder + "/mp4-live-periods-h264bl_low-.mp4")))
            for (position, number) in numbers.enumerated() {
                let kept = try bytes(package + String(format: "/%@-audio-und/%05d.m4s", period, position + 1))
                #expect(kept == (try bytes(folder + "/mp4-live-periods-aaclc-\(number).m4s")), "\(period) \(number)")
            }
        }
        // The second period plays from disk as the origin's segments 13 to 24.
        var joined = try bytes(folder + "/mp4-live-periods-h264bl_low-.mp4")
        for number in 13...24 { joined += try bytes(folder + "/mp4-live-periods-h264bl_low-\(number).m4s") }
        try joined.write(to: URL(fileURLWithPath: folder + "/second.mp4"))
        let played = try await Self.checksums(try Self.period(1, of: package + "/manifest.mpd"))
        let origin = try await Self.checksums(folder + "/second.mp4")
        #expect(played.count == 3000 && played == origin)
        // Each initialization segment's bytes came from the origin once, for both periods.
        let initializations = try await setup.origin.stats().requests.filter { $0.path.hasSuffix("-.mp4") }
        let sizes = try ["h264bl_low", "aaclc"].map { try bytes(folder + "/mp4-live-periods-\($0)-.mp4").count }
        #expect(initializations.reduce(0) { $0 + $1.bodyBytes } <= Int64(sizes.reduce(0, +)) + 4, "\(initializations)")
    }
}
