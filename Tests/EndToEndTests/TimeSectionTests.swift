import Foundation
import StreamCache
import StreamCacheTesting
import Testing

/// `download URL --section START-END` of streams made by ffmpeg and segmented by GStreamer: only
/// the segments that play in the section are fetched (with each rendition's first segment, where
/// the timeline begins), checked in the origin's log; `-o` decodes to the same frames as ffmpeg's `-ss/-to` cut of the whole stream; a second
/// section fetches only what the first did not; bad sections get one line and exit 64 before any
/// segment is fetched.
@Suite(.timeLimit(.minutes(5))) struct TimeSectionTests {
    /// A minute of 2 s segments made by ffmpeg, as TS HLS, fMP4 HLS or DASH, or segmented and
    /// muxed by GStreamer's `hlssink2` (`gstreamer`), and its playlist or MPD relative to the
    /// origin's folder.
    static func make(_ kind: String, in origin: String) async throws -> String {
        switch kind {
        case "gstreamer":
            let folder = origin + "/gstreamer"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let source = try await Tool.run(
                "ffmpeg",
                [
                    "-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=60", "-f", "lavfi",
                    "-i", "sine=frequency=440:duration=60", "-c:v", "libx264", "-preset", "ultrafast", "-g", "10",
                    "-c:a", "aac", folder + "/source.mp4",
                ]
            )
            try #require(source.status == 0, "\(source.stderr)")
            let segmented = try await Tool.run(
                "gst-launch-1.0",
                [
                    "-q", "filesrc", "location=\(folder)/source.mp4", "!", "qtdemux", "name=d", "d.video_0", "!",
                    "queue", "!", "h264parse", "!", "hlssink2", "name=s", "target-duration=2", "playlist-length=0",
                    "max-files=0", "location=\(folder)/seg%05d.ts", "playlist-location=\(folder)/index.m3u8",
                    "d.audio_0", "!", "queue", "!", "aacparse", "!", "s.audio",
                ],
                timeout: .seconds(30)
            )
            // GStreamer 1.22's gst-launch now and then never sees the pipeline's end of stream
            // after hlssink2 has written every segment and ended the playlist (about one run in
            // 30 with both cores busy): a playlist that ends is the stream made.
            let playlist = (try? String(contentsOfFile: folder + "/index.m3u8", encoding: .utf8)) ?? ""
            let ended = playlist.hasSuffix("#EXT-X-ENDLIST") || playlist.hasSuffix("#EXT-X-ENDLIST\n")
            try #require(segmented.status == 0 || (segmented.timedOut && ended), "\(segmented.stderr)")
            return "gstreamer/index.m3u8"
        case "ts":
            try await TestStreams.make(.ts, in: origin, seconds: 60)
            return TestStreams.Kind.ts.playlist
        case "fmp4":
            try await TestStreams.make(.fmp4, in: origin, seconds: 60)
            return TestStreams.Kind.fmp4.playlist
        default:
            try await DASHDownloadTests.makeMinute(in: origin + "/dash", audio: true)
            return "dash/manifest.mpd"
        }
    }

    /// What ffmpeg decodes of every stream of `file`, frame by frame.
    static func frames(_ file: String) async throws -> [String] {
        let decoded = try await Tool.run("ffmpeg", ["-v", "error", "-threads", "1", "-i", file, "-f", "framemd5", "-"])
        #expect(decoded.status == 0, "\(decoded.stderr)")
        return decoded.output.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    }

    /// ffmpeg's cut of the whole stream at `url`, remuxed into one file first, by stream copy.
    static func ffmpegCut(_ url: String, from start: String, to end: String?, in folder: String) async throws -> String
    {
        let whole = folder + "/whole.mp4"
        let cut = folder + "/reference.mp4"
        let remuxed = try await Tool.run("ffmpeg", ["-v", "error", "-y", "-i", url, "-c", "copy", whole])
        try #require(remuxed.status == 0, "\(remuxed.stderr)")
        let made = try await Tool.run(
            "ffmpeg",
            ["-v", "error", "-y", "-ss", start] + (end.map { ["-to", $0] } ?? []) + ["-i", whole, "-c", "copy", cut]
        )
        try #require(made.status == 0, "\(made.stderr)")
        return cut
    }

    /// The segment files the origin was asked for (not playlists, MPDs or init sections).
    static func segments(_ stats: OriginProcess.Stats) -> Set<String> {
        Set(
            stats.requests.map(\.path).filter {
                ($0.hasSuffix(".ts") || $0.hasSuffix(".m4s")) && !$0.contains("init")
            }
        )
    }

    @Test(arguments: ["ts", "fmp4", "dash", "gstreamer"])
    func aSectionFetchesTheSegmentsItOverlapsAndCutsAsFFmpegDoes(kind: String) async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let stream = try await Self.make(kind, in: setup.workspace.originDirectory)
        let output = setup.workspace.outputDirectory + "/section.mp4"
        let result = try await setup.download(
            stream,
            ["--section", "0:21.3-0:33.7", "-o", output],
            command: ["download"]
        )
        #expect(result.status == 0, "\(result.stderr)")

        // 21.3 to 33.7 s plays in the 2 s segments from 20 s to 34 s: 7 of 30 a rendition, and
        // each rendition's first.
        let fetched = Self.segments(try await setup.origin.settledStats())
        let renditions = kind == "dash" ? 2 : 1
        #expect(fetched.count == renditions * 8, "\(fetched.sorted())")
        if kind == "ts" || kind == "fmp4" {
            let names = kind == "ts" ? (10...16).map { "index\($0).ts" } : (10...16).map { "index\($0).m4s" }
            let first = kind == "ts" ? "index0.ts" : "index0.m4s"
            #expect(fetched == Set((names + [first]).map { "/\(kind)/\($0)" }), "\(fetched.sorted())")
        }

        let reference = try await Self.ffmpegCut(
            setup.origin.url(stream),
            from: "21.3",
            to: "33.7",
            in: setup.workspace.outputDirectory
        )
        let expected = try await Self.frames(reference)
        let written = try await Self.frames(output)
        #expect(expected.count > 100, "the reference holds \(expected.count) frames")
        #expect(written == expected, "\(written.count) frames where ffmpeg's cut has \(expected.count)")
    }

    /// From the stream's start, and to its end: the cut keeps what ffmpeg's does at both ends.
    @Test func sectionsAtTheEndsOfTheStreamCutAsFFmpegDoes() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let stream = try await Self.make("ts", in: setup.workspace.originDirectory)
        for (section, start, end) in [("*-5.5", "0", "5.5"), ("51.2-*", "51.2", nil)] {
            let output = setup.workspace.outputDirectory + "/section.mp4"
            let result = try await setup.download(
                stream,
                ["--section", section, "-o", output, "--force"],
                command: ["download"]
            )
            #expect(result.status == 0, "\(result.stderr)")
            let reference = try await Self.ffmpegCut(
                setup.origin.url(stream),
                from: start,
                to: end,
                in: setup.workspace.outputDirectory
            )
            let expected = try await Self.frames(reference)
            #expect(try await Self.frames(output) == expected, "section \(section)")
        }
    }

    /// A second section that overlaps the first is a package of its own, made from the cache:
    /// the origin is asked only for the segments the first did not fetch. The package plays
    /// the section's segments, from the first one kept. It starts where a segment does by the
    /// playlist, so the segment before is kept too: it holds the frames that play at the
    /// section's start, and the file is ffmpeg's cut, audio and video.
    @Test func aSecondSectionFetchesOnlyWhatTheFirstDidNot() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let stream = try await Self.make("ts", in: setup.workspace.originDirectory)
        let first = try await setup.download(stream, ["--section", "21.3-33.7"], command: ["download"])
        #expect(first.status == 0, "\(first.stderr)")
        let before = Self.segments(try await setup.origin.settledStats())
        let output = setup.workspace.outputDirectory + "/second.mp4"
        let second = try await setup.download(
            stream,
            ["--section", "30-40", "-o", output, "--keep-package"],
            command: ["download"]
        )
        #expect(second.status == 0, "\(second.stderr)")
        let stats = try await setup.origin.settledStats()
        #expect(stats.duplicateBytes == 0, "the origin sent \(stats.duplicateBytes) bytes twice")
        #expect(Self.segments(stats).subtracting(before) == Set((17...19).map { "/ts/index\($0).ts" }))

        let id = try #require(second.output.split(separator: "\n").last.map(String.init))
        let playlist = try String(contentsOfFile: setup.library + "/\(id)/video/index.m3u8", encoding: .utf8)
        let listed = playlist.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(listed == (14...19).map { String(format: "%05d.ts", $0)[...] }, "\(playlist)")
        let assets = try await setup.assets()
        #expect(assets.count == 2 && assets.allSatisfy { $0.state == "complete" })
        let reference = try await Self.ffmpegCut(
            setup.origin.url(stream),
            from: "30",
            to: "40",
            in: setup.workspace.outputDirectory
        )
        #expect(try await Self.frames(output) == Self.frames(reference))
    }

    /// The video frames' presentation times of `file`, in order.
    static func videoTimes(_ file: String) async throws -> [String] {
        let probed = try await Tool.run(
            "ffprobe",
            ["-v", "error", "-select_streams", "v", "-show_entries", "frame=pts_time", "-of", "csv=p=0", file]
        )
        #expect(probed.status == 0, "\(probed.stderr)")
        // A frame with side data has a line of its own for it, after a comma.
        return probed.output.split(separator: "\n").compactMap { line in
            line.split(separator: ",").first.map(String.init)
        }
    }

    /// `--exact`: the section's frames are the ones from START to END, timed as in ffmpeg's
    /// re-encoding cut of the whole stream that keeps the source's frames and their times
    /// (`-fps_mode passthrough -enc_time_base -1`; the keyframe cut starts earlier), for a
    /// stream's section and a progressive file's. Only the partial groups of pictures at the
    /// edges are re-encoded: the frames between decode to the source's, bit for bit.
    @Test func anExactSectionStartsAndEndsAtItsFrames() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let stream = try await Self.make("ts", in: setup.workspace.originDirectory)
        let folder = setup.workspace.outputDirectory
        // The whole stream as one file, which the origin serves too.
        _ = try await Self.ffmpegCut(setup.origin.url(stream), from: "0", to: nil, in: folder)
        try FileManager.default.copyItem(
            atPath: folder + "/whole.mp4",
            toPath: setup.workspace.originDirectory + "/whole.mp4"
        )
        /// ffmpeg's exact cut of `input`: its frames' times, and the source's frames decoded.
        func reference(_ input: String) async throws -> (times: [String], frames: [String]) {
            let section = ["-ss", "21.35", "-to", "33.65"]
            let reference = folder + "/exact-reference.mp4"
            let cut = try await Tool.run(
                "ffmpeg",
                ["-v", "error", "-y"] + section + ["-i", input, "-c:v", "libx264", "-fps_mode", "passthrough"]
                    + ["-enc_time_base", "-1", "-c:a", "copy", reference]
            )
            try #require(cut.status == 0, "\(cut.stderr)")
            let times = try await Self.videoTimes(reference)
            #expect(times.count > 100, "\(times.count) frames in ffmpeg's exact cut")
            let frames = try await Self.videoFrames(input, section: section)
            #expect(frames.count == times.count)
            return (times, frames)
        }
        /// How many frames of `file` decode to the source's; a group of pictures is 10 frames.
        func copiedFrames(_ file: String, of source: [String]) async throws -> Int {
            zip(try await Self.videoFrames(file), source).filter { $0 == $1 }.count
        }

        let expected = try await reference(setup.origin.url(stream))
        let fromStream = folder + "/exact-stream.mp4"
        let downloaded = try await setup.download(
            stream,
            ["--section", "21.35-33.65", "--exact", "-o", fromStream],
            command: ["download"]
        )
        #expect(downloaded.status == 0, "\(downloaded.stderr)")
        #expect(try await Self.videoTimes(fromStream) == expected.times)
        #expect(try await copiedFrames(fromStream, of: expected.frames) >= expected.times.count - 20)

        let fromFile = folder + "/exact-file.mp4"
        let got = try await CLI.run(
            ["get", setup.origin.url("whole.mp4"), "--section", "21.35-33.65", "--exact", "-o", fromFile],
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(got.status == 0, "\(got.stderr)")
        let expectedOfFile = try await reference(folder + "/whole.mp4")
        #expect(try await Self.videoTimes(fromFile) == expectedOfFile.times)
        #expect(try await copiedFrames(fromFile, of: expectedOfFile.frames) >= expectedOfFile.times.count - 20)

        let keyframeCut = folder + "/keyframe.mp4"
        let copied = try await setup.download(
            stream,
            ["--section", "21.35-33.65", "-o", keyframeCut],
            command: ["download"]
        )
        #expect(copied.status == 0, "\(copied.stderr)")
        // A keyframe cut stores the frames from the keyframe before START, which its edit list
        // hides; an exact one stores none before it.
        func stored(_ file: String) async throws -> Int {
            let probed = try await Tool.run(
                "ffprobe",
                ["-v", "error", "-select_streams", "v", "-show_entries", "packet=pts", "-of", "csv=p=0", file]
            )
            return probed.output.split(separator: "\n").count
        }
        #expect(try await stored(fromStream) == expected.times.count)
        #expect(try await stored(fromFile) == expectedOfFile.times.count)
        #expect(try await stored(keyframeCut) > expected.times.count)
    }

    /// `--exact` of a DASH stream, whose package's timeline begins before its first timestamps:
    /// the video's frames as ffmpeg's exact cut of the MPD has them (to its millisecond), the
    /// audio copied from its first frame at or after START to END, none before.
    @Test func anExactSectionOfADASHStreamHoldsItsAudioFromStartToEnd() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let stream = try await Self.make("dash", in: setup.workspace.originDirectory)
        let folder = setup.workspace.outputDirectory
        let output = folder + "/exact-dash.mp4"
        let result = try await setup.download(
            stream,
            ["--section", "21.35-33.65", "--exact", "-o", output],
            command: ["download"]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let reference = folder + "/exact-reference.mp4"
        let cut = try await Tool.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-ss", "21.35", "-to", "33.65", "-i", setup.origin.url(stream), "-c:v", "libx264",
                "-fps_mode", "passthrough", "-enc_time_base", "-1", "-c:a", "copy", reference,
            ]
        )
        try #require(cut.status == 0, "\(cut.stderr)")
        let times = try await Self.videoTimes(output).compactMap(Double.init)
        let expected = try await Self.videoTimes(reference).compactMap(Double.init)
        #expect(expected.count > 100 && times.count == expected.count, "\(times.count) frames for \(expected.count)")
        let close = zip(times, expected).allSatisfy { abs($0 - $1) < 0.001 }
        #expect(close, "\(times.prefix(3)) for \(expected.prefix(3))")
        let probed = try await Tool.run(
            "ffprobe",
            ["-v", "error", "-select_streams", "a", "-show_entries", "packet=pts_time", "-of", "csv=p=0", output]
        )
        let audio = probed.output.split(separator: "\n").compactMap { Double($0.split(separator: ",").first ?? "") }
        let (first, last) = (try #require(audio.first), try #require(audio.last))
        // An AAC frame lasts about 21 ms.
        #expect(first >= 0 && first < 0.03, "the audio starts at \(first) s")
        #expect(last < 12.3, "the audio's last frame starts at \(last) s")
    }

    /// The decoded video frames of `file`, their hashes in order (their times left out: a join
    /// counts its parts' times on from the part before); of the part `section` (ffmpeg's input
    /// options `-ss`, `-to`) only, if given.
    static func videoFrames(_ file: String, section: [String] = []) async throws -> [String] {
        let decoded = try await Tool.run(
            "ffmpeg",
            ["-v", "error", "-threads", "1"] + section + ["-i", file, "-map", "0:v:0", "-f", "framemd5", "-"]
        )
        #expect(decoded.status == 0, "\(decoded.stderr)")
        return decoded.output.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap {
            $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    /// ffmpeg's stream-copy cut of `whole` from `start` to `end`: into NUT with its timestamps
    /// from zero, every frame from the keyframe shown (`hidden == false`), or into MP4, whose
    /// edit list hides the frames before `start`.
    static func referencePart(
        _ whole: String,
        _ start: String,
        _ end: String,
        hidden: Bool,
        in folder: String
    )
        async throws -> [String]
    {
        let part = folder + (hidden ? "/reference-part.mp4" : "/reference-part.nut")
        let shift = hidden ? [] : ["-avoid_negative_ts", "make_zero"]
        let cut = try await Tool.run(
            "ffmpeg",
            ["-v", "error", "-y", "-ss", start, "-to", end, "-i", whole, "-c", "copy"] + shift + [part]
        )
        try #require(cut.status == 0, "\(cut.stderr)")
        return try await Self.videoFrames(part)
    }

    /// Several sections and `-o`: one file that plays each section from its keyframe to its end,
    /// one after the other, frame for frame as ffmpeg cuts each from the whole stream, with only
    /// their segments fetched; `export` of the package writes the same file with the origin
    /// stopped. A section that starts where a segment does by the playlist starts at the keyframe
    /// of the segment before, which the package keeps.
    @Test func severalSectionsJoinInOneFile() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let stream = try await Self.make("ts", in: setup.workspace.originDirectory)
        let folder = setup.workspace.outputDirectory
        let output = folder + "/joined.mp4"
        let result = try await setup.download(
            stream,
            ["--section", "11.3-20", "--section", "40.5-47.5", "-o", output, "--keep-package"],
            command: ["download"]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let fetched = Self.segments(try await setup.origin.settledStats())
        let overlapped = [0] + Array(5...9) + Array(20...23)
        #expect(fetched == Set(overlapped.map { "/ts/index\($0).ts" }), "\(fetched.sorted())")
        let onBoundary = try await setup.download(
            stream,
            ["--section", "11.3-20", "--section", "40-47.5"],
            command: ["download"]
        )
        #expect(onBoundary.status == 0, "\(onBoundary.stderr)")

        _ = try await Self.ffmpegCut(setup.origin.url(stream), from: "0", to: nil, in: folder)
        let whole = folder + "/whole.mp4"
        let first = try await Self.referencePart(whole, "11.3", "20", hidden: false, in: folder)
        let expected = try await first + Self.referencePart(whole, "40.5", "47.5", hidden: false, in: folder)
        // 15.7 s of sections at 10 frames a second, each from its keyframe (one a second).
        #expect((157...177).contains(expected.count), "\(expected.count) frames")
        #expect(try await Self.videoFrames(output) == expected)
        let expectedOnBoundary = try await first + Self.referencePart(whole, "40", "47.5", hidden: false, in: folder)

        // --exact: each part from its own first frame to its last, as ffmpeg's re-encoding cut
        // that keeps the source's frames; only the partial groups at their edges re-encoded.
        var exactFrames = 0
        var sourceFrames: [String] = []
        for (start, end) in [("11.3", "20"), ("40.5", "47.5")] {
            let reference = folder + "/exact-part.mp4"
            let cut = try await Tool.run(
                "ffmpeg",
                [
                    "-v", "error", "-y", "-ss", start, "-to", end, "-i", whole, "-c:v", "libx264", "-fps_mode",
                    "passthrough", "-c:a", "copy", reference,
                ]
            )
            try #require(cut.status == 0, "\(cut.stderr)")
            exactFrames += try await Self.videoTimes(reference).count
            sourceFrames += try await Self.videoFrames(whole, section: ["-ss", start, "-to", end])
        }
        let exactOutput = folder + "/exact-joined.mp4"
        let exact = try await setup.download(
            stream,
            ["--section", "11.3-20", "--section", "40.5-47.5", "--exact", "-o", exactOutput],
            command: ["download"]
        )
        #expect(exact.status == 0, "\(exact.stderr)")
        #expect(try await Self.videoTimes(exactOutput).count == exactFrames)
        #expect(sourceFrames.count == exactFrames)
        // A group of pictures is 10 frames: at most two a part re-encoded.
        let copied = zip(try await Self.videoFrames(exactOutput), sourceFrames).filter { $0 == $1 }.count
        #expect(copied >= exactFrames - 40, "\(copied) of \(exactFrames) frames copied")
        #expect(exactFrames < expected.count, "the keyframe parts hold no frame before their sections")

        try await setup.origin.stop()
        for (download, frames) in [(result, expected), (onBoundary, expectedOnBoundary)] {
            let id = try #require(download.output.split(separator: "\n").last.map(String.init))
            let exported = folder + "/\(id).mp4"
            let export = try await CLI.run(["export", id, exported], cacheDir: setup.workspace.cacheDirectory)
            #expect(export.status == 0, "\(export.stderr)")
            #expect(try await Self.videoFrames(exported) == frames, "package \(id)")
        }
    }

    /// A section of a package on disk: `export ID FILE --section` cuts it with the origin
    /// stopped, as ffmpeg cuts the whole stream, from a whole package and from inside a section
    /// of a package of one section or of two; of a package of sections, only inside them.
    @Test func aSectionOfAPackageOnDiskCostsTheOriginNothing() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let stream = try await Self.make("ts", in: setup.workspace.originDirectory)
        let whole = try await setup.download(stream, [], command: ["download"])
        #expect(whole.status == 0, "\(whole.stderr)")
        let wholeID = try #require(whole.output.split(separator: "\n").last.map(String.init))
        let part = try await setup.download(stream, ["--section", "20-40"], command: ["download"])
        let partID = try #require(part.output.split(separator: "\n").last.map(String.init))
        // Two sections with a gap between them: the cut is inside the second.
        let parts = try await setup.download(
            stream,
            ["--section", "5-10", "--section", "25.5-35"],
            command: ["download"]
        )
        let partsID = try #require(parts.output.split(separator: "\n").last.map(String.init))
        let reference = try await Self.ffmpegCut(
            setup.origin.url(stream),
            from: "25.5",
            to: "31.2",
            in: setup.workspace.outputDirectory
        )
        let expected = try await Self.frames(reference)
        try await setup.origin.stop()

        for id in [wholeID, partID, partsID] {
            let output = setup.workspace.outputDirectory + "/\(id).mp4"
            let result = try await CLI.run(
                ["export", id, output, "--section", "25.5-31.2"],
                cacheDir: setup.workspace.cacheDirectory
            )
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try await Self.frames(output) == expected, "package \(id)")
        }
        let outside = try await CLI.run(
            ["export", partID, setup.workspace.outputDirectory + "/outside.mp4", "--section", "10-30"],
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(outside.status == 64 && outside.stderr.contains("is not inside it"), "\(outside.stderr)")
        let past = try await CLI.run(
            ["export", wholeID, setup.workspace.outputDirectory + "/past.mp4", "--section", "2:00-3:00"],
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(past.status == 64 && past.stderr.contains("starts past the end"), "\(past.stderr)")
        #expect(!FileManager.default.fileExists(atPath: setup.workspace.outputDirectory + "/past.mp4"))
    }

    /// A chapter of an HLS stream's chapter list (`com.apple.hls.chapters`) by its title: only
    /// its segments are fetched, and the file is ffmpeg's cut of its times; a title the list
    /// does not hold is refused in one line.
    @Test func aChapterOfAStreamIsDownloadedByItsTitle() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let origin = setup.workspace.originDirectory
        _ = try await Self.make("ts", in: origin)
        try Data(
            """
            #EXTM3U
            #EXT-X-SESSION-DATA:DATA-ID="com.apple.hls.chapters",URI="chapters.json"
            #EXT-X-STREAM-INF:BANDWIDTH=300000
            index.m3u8

            """.utf8
        ).write(to: URL(fileURLWithPath: origin + "/ts/master.m3u8"))
        try Data(
            """
            [{"chapter": 1, "start-time": 0, "duration": 21.5, "titles": [{"language": "en", "title": "Opening"}]},
             {"chapter": 2, "start-time": 21.5, "duration": 14, "titles": [{"language": "en", "title": "Middle"}]},
             {"chapter": 3, "start-time": 35.5, "duration": 24.5, "titles": [{"language": "en", "title": "Closing"}]}]
            """.utf8
        ).write(to: URL(fileURLWithPath: origin + "/ts/chapters.json"))

        let refused = try await setup.download("ts/master.m3u8", ["--section", "Intermission"], command: ["download"])
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(
            refused.stderr.split(separator: "\n").count == 1
                && refused.stderr.contains("is titled 'Intermission'; its chapters: 'Opening', 'Middle', 'Closing'"),
            "\(refused.stderr)"
        )
        let output = setup.workspace.outputDirectory + "/middle.mp4"
        let result = try await setup.download(
            "ts/master.m3u8",
            ["--section", "middle", "-o", output],
            command: ["download"]
        )
        #expect(result.status == 0, "\(result.stderr)")
        // 21.5 to 35.5 s plays in the 2 s segments from 20 s to 36 s, and the first.
        let fetched = Self.segments(try await setup.origin.settledStats())
        #expect(fetched == Set(([0] + Array(10...17)).map { "/ts/index\($0).ts" }), "\(fetched.sorted())")
        let reference = try await Self.ffmpegCut(
            setup.origin.url("ts/index.m3u8"),
            from: "21.5",
            to: "35.5",
            in: setup.workspace.outputDirectory
        )
        #expect(try await Self.frames(output) == Self.frames(reference))
    }

    /// Each bad section costs one line and exit 64, and leaves no package; none fetches a segment.
    @Test func badSectionsAreRefusedWithOneLine() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let stream = try await Self.make("ts", in: setup.workspace.originDirectory)
        let output = setup.workspace.outputDirectory + "/x.mp4"
        let cases: [([String], String)] = [
            (["--section", "2:00-1:00"], "its end is not after its start"),
            (["--section", "1:00:00-1:01:00"], "starts past the end"),
            (["--section", "10-30", "--section", "20-40"], "overlap"),
            (["--section", "ten-20"], "is neither a time range (START-END, such as 1:02:00-1:04:30) nor a chapter"),
            (["--section", "1:75-2:00"], "is not a time"),
            (["--section", " "], "--section is empty"),
            (["--section", "10-20", "--duration", "30s"], "record a live one"),
        ]
        for (arguments, message) in cases {
            let result = try await setup.download(stream, arguments, command: ["download"])
            let lines = result.stderr.split(separator: "\n")
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(lines.count == 1 && lines[0].contains(message), "\(arguments): \(result.stderr)")
        }
        let file = try await setup.download("ts/episode.mp4", ["--section", "10-20"], command: ["download"])
        #expect(file.status == 64 && file.stderr.contains("use get URL --section"), "\(file.stderr)")
        #expect(Self.segments(try await setup.origin.settledStats()).isEmpty)
        #expect(try await setup.origin.settledStats().requests.allSatisfy { $0.path.hasSuffix(".m3u8") })
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(try await setup.assets().isEmpty)

        // A live stream's future has no timeline to cut.
        let live = try await OfflineSetup(originArguments: ["--live"])
        defer { live.remove() }
        try await TestStreams.make(.ts, in: live.workspace.originDirectory, seconds: 60)
        let recorded = try await live.download("ts/index.m3u8", ["--section", "2-4"], command: ["download"])
        #expect(
            recorded.status == 64 && recorded.stderr.contains("a live stream has no timeline"),
            "\(recorded.stderr)"
        )
        #expect(try await live.assets().isEmpty)
    }
}

/// `get URL --section START-END -o FILE` of progressive files: ffmpeg reads them through the
/// cache, so the origin sends the movie box and the section's samples, and not much more; the
/// file decodes to the frames of ffmpeg's own cut of the origin's URL.
@Suite(.timeLimit(.minutes(5))) struct FileSectionTests {
    /// A minute of media made by ffmpeg, written under the origin's folder as `name`.
    static func make(_ name: String, in origin: String, seconds: Int = 60, arguments: [String]) async throws {
        let made = try await Tool.run(
            "ffmpeg",
            [
                "-hide_banner", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=\(seconds)",
                "-f", "lavfi", "-i", "sine=frequency=440:duration=\(seconds)",
            ] + arguments + [origin + "/" + name]
        )
        try #require(made.status == 0, "\(made.stderr)")
    }

    /// How many of the bytes that `requests` brought an earlier one of them had brought already.
    static func bytesSentTwice(_ requests: some Sequence<OriginProcess.Stats.Request>) -> Int64 {
        var sent = ByteRangeSet()
        var twice: Int64 = 0
        for request in requests {
            let first = request.range.flatMap { Int64($0.dropFirst(6).split(separator: "-").first ?? "") } ?? 0
            let brought = ByteRange(first, first + request.bodyBytes)
            twice += brought.count - sent.gaps(in: brought).reduce(0) { $0 + $1.count }
            sent.insert(brought)
        }
        return twice
    }

    /// The size of the `moov` box of the MP4 file at `path`, found among its top-level boxes.
    static func movieBoxSize(_ path: String) throws -> Int64 {
        let handle = try #require(FileHandle(forReadingAtPath: path))
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        var offset: UInt64 = 0
        while offset + 8 <= size {
            try handle.seek(toOffset: offset)
            let head = [UInt8](try #require(try handle.read(upToCount: 16)))
            var length = head[0..<4].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            if length == 1, head.count == 16 { length = head[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
            if String(decoding: head[4..<8], as: UTF8.self) == "moov" { return Int64(length) }
            guard length >= 8 else { break }
            offset += length
        }
        Issue.record("no moov box in \(path)")
        return 0
    }

    /// The bytes of `file` the packets of `start` to `end` seconds span, from the keyframe at or
    /// before `start` (every stream), as ffprobe places them.
    static func sectionSpan(_ file: String, from start: Double, to end: Double) async throws -> Range<Int64> {
        let probed = try await Tool.run(
            "ffprobe",
            ["-v", "error", "-show_entries", "packet=pts_time,pos,size,flags", "-of", "csv=p=0", file]
        )
        var low = Int64.max
        var high: Int64 = 0
        for line in probed.output.split(separator: "\n") {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count >= 4, let time = Double(fields[0]), let size = Int64(fields[1]),
                let position = Int64(fields[2])
            else { continue }
            // A generous start: the keyframes are 2 s apart.
            guard time >= start - 2, time <= end else { continue }
            low = min(low, position)
            high = max(high, position + size)
        }
        return low..<high
    }

    @Test(arguments: [
        ("moov-at-end.mp4", ["-c:v", "libx264", "-preset", "ultrafast", "-g", "50", "-b:v", "800k", "-c:a", "aac"]),
        (
            "faststart.mp4",
            [
                "-c:v", "libx264", "-preset", "ultrafast", "-g", "50", "-b:v", "800k", "-c:a", "aac", "-movflags",
                "+faststart",
            ]
        ),
        ("episode.mp3", ["-vn", "-c:a", "libmp3lame", "-b:a", "128k"]),
    ])
    func aSectionReadsItsSamplesAndCutsAsFFmpegDoes(name: String, encode: [String]) async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let origin = setup.workspace.originDirectory
        try await Self.make(name, in: origin, seconds: 180, arguments: encode)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: origin + "/" + name)[.size] as? Int64)
        let ext = (name as NSString).pathExtension
        let output = setup.workspace.outputDirectory + "/section." + ext
        let result = try await CLI.run(
            ["get", setup.origin.url(name), "--section", "21.3-33.7", "-o", output],
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(result.status == 0, "\(result.stderr)")
        let sent = try await setup.origin.settledStats().bodyBytes

        let reference = setup.workspace.outputDirectory + "/reference." + ext
        let cut = try await Tool.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-ss", "21.300", "-to", "33.700", "-i", setup.origin.url(name), "-c", "copy",
                reference,
            ]
        )
        try #require(cut.status == 0, "\(cut.stderr)")
        let expected = try await TimeSectionTests.frames(reference)
        #expect(expected.count > 100)
        #expect(try await TimeSectionTests.frames(output) == expected)

        let span = try await Self.sectionSpan(origin + "/" + name, from: 21.3, to: 33.7)
        if ext == "mp3" {
            // ffmpeg finds an MP3's time by reading its frames from the start, as its own cut does:
            // up to the section's end, and a fetch span (256 KiB) past it.
            #expect(sent <= span.upperBound + (512 << 10), "sent \(sent) of \(size) bytes, the section ends at \(span)")
        } else {
            // The samples, the movie box and at most 1 MiB besides: what ffmpeg reads past the
            // box and the spans in flight where it seeks away. With the engine's usual spans
            // and read-ahead, ffmpeg's reads cost most of the file.
            let movie = try Self.movieBoxSize(origin + "/" + name)
            #expect(sent <= Int64(span.count) + movie + (1 << 20), "sent \(sent) of \(size) bytes for \(span)")
            #expect(sent < size / 3, "sent \(sent) of \(size) bytes")

            // --exact, into a cache of its own, keeps to the same bound: its packets are read a
            // little past END, and its edges re-encoded from what the cut reads anyway.
            let beforeExact = try await setup.origin.settledStats()
            let exact = try await CLI.run(
                ["get", setup.origin.url(name), "--section", "21.3-33.7", "--exact", "-o", output + ".exact." + ext],
                cacheDir: setup.workspace.outputDirectory + "/exact-cache"
            )
            #expect(exact.status == 0, "\(exact.stderr)")
            let afterExact = try await setup.origin.settledStats()
            let sentExact = afterExact.bodyBytes - beforeExact.bodyBytes
            #expect(sentExact <= Int64(span.count) + movie + (1 << 20), "--exact sent \(sentExact) bytes for \(span)")
            // Its ffprobe and ffmpeg runs each read the file's head and the section: every byte
            // comes from the origin once.
            let requests = afterExact.requests.dropFirst(beforeExact.requests.count)
            #expect(Self.bytesSentTwice(requests) == 0, "\(requests.map { "\($0.range ?? "all") \($0.bodyBytes)" })")
        }

        // A second section that overlaps the first: the origin sends what the first did not
        // read, and at most 1 MiB besides (the spans read ahead where ffmpeg read and left).
        let before = try await setup.origin.settledStats().bodyBytes
        let second = try await CLI.run(
            ["get", setup.origin.url(name), "--section", "30-40", "-o", output + "." + ext],
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(second.status == 0, "\(second.stderr)")
        let more = try await setup.origin.settledStats().bodyBytes - before
        let new = try await Self.sectionSpan(origin + "/" + name, from: 35.7, to: 40)
        #expect(more <= new.count + (1 << 20), "the second section sent \(more) bytes for a new span of \(new)")
    }

    /// A chapter by its title: the file's header says where it is, and the cut is ffmpeg's of
    /// those times; a title no chapter has, or a file without chapters, is refused in one line.
    @Test func aChapterIsCutByItsTitle() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let origin = setup.workspace.originDirectory
        let folder = setup.workspace.outputDirectory
        try await Self.make(
            "plain.mp4",
            in: origin,
            arguments: ["-c:v", "libx264", "-preset", "ultrafast", "-g", "25"]
        )
        let metadata = folder + "/chapters.txt"
        try Data(
            """
            ;FFMETADATA1
            [CHAPTER]
            TIMEBASE=1/1000
            START=0
            END=20000
            title=Opening
            [CHAPTER]
            TIMEBASE=1/1000
            START=20000
            END=45000
            title=The Interview
            [CHAPTER]
            TIMEBASE=1/1000
            START=45000
            END=60000
            title=Closing

            """.utf8
        ).write(to: URL(fileURLWithPath: metadata))
        let marked = try await Tool.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-i", origin + "/plain.mp4", "-i", metadata, "-map", "0", "-map_chapters", "1",
                "-c", "copy", origin + "/chapters.mp4",
            ]
        )
        try #require(marked.status == 0, "\(marked.stderr)")

        let output = folder + "/interview.mp4"
        let result = try await CLI.run(
            ["get", setup.origin.url("chapters.mp4"), "--section", "the interview", "-o", output],
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(result.status == 0, "\(result.stderr)")
        let reference = folder + "/reference.mp4"
        let cut = try await Tool.run(
            "ffmpeg",
            ["-v", "error", "-y", "-ss", "20", "-to", "45", "-i", origin + "/chapters.mp4", "-c", "copy", reference]
        )
        try #require(cut.status == 0, "\(cut.stderr)")
        #expect(try await TimeSectionTests.frames(output) == TimeSectionTests.frames(reference))
        // The file lasts the chapter, with no chapter track of the whole file's length.
        let probed = try await Tool.run(
            "ffprobe",
            ["-v", "error", "-show_entries", "format=duration", "-show_chapters", "-of", "csv=p=0", output]
        )
        let lines = probed.output.split(separator: "\n")
        #expect(lines.count == 1 && (Double(lines[0]).map { $0 > 24.9 && $0 < 26 } ?? false), "\(probed.output)")

        let cases: [(String, String, String)] = [
            ("chapters.mp4", "Intermission", "is titled 'Intermission'; its chapters: 'Opening', 'The Interview'"),
            ("plain.mp4", "Opening", "is neither a time range (START-END, such as 1:02:00-1:04:30) nor a chapter"),
        ]
        for (file, title, message) in cases {
            let refused = try await CLI.run(
                ["get", setup.origin.url(file), "--section", title, "-o", folder + "/refused.mp4"],
                cacheDir: setup.workspace.cacheDirectory
            )
            let lines = refused.stderr.split(separator: "\n").filter { !$0.hasPrefix("cutting") }
            #expect(refused.status == 64, "\(title): \(refused.stderr)")
            #expect(lines.count == 1 && lines[0].contains(message), "\(title): \(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: folder + "/refused.mp4"))
        }
    }

    @Test func badSectionsOfAFileAreRefusedWithOneLine() async throws {
        let setup = try await OfflineSetup(originArguments: ["--fault", "ignore-range"])
        defer { setup.remove() }
        let origin = setup.workspace.originDirectory
        try await Self.make("episode.mp3", in: origin, arguments: ["-vn", "-c:a", "libmp3lame", "-b:a", "64k"])
        let folder = setup.workspace.outputDirectory
        let url = setup.origin.url("episode.mp3")
        let cases: [([String], Int32, String)] = [
            (["--section", "10-20"], 64, "give -o FILE"),
            (["--section", "10-20", "-o", folder + "/a.txt"], 64, "writes .mp4"),
            (["--section", "20-10", "-o", folder + "/a.mp3"], 64, "its end is not after its start"),
            (["--section", "10-20", "-r", "0-9", "-o", folder + "/a.mp3"], 64, "no --range"),
            (["--section", "10-20", "-H", "X-Token: 1", "-o", folder + "/a.mp3"], 64, "no -H"),
            // The origin ignores Range: the section would cost the whole file.
            (["--section", "10-20", "-o", folder + "/a.mp3"], 1, "ignores Range"),
        ]
        for (arguments, status, message) in cases {
            let result = try await CLI.run(["get", url] + arguments, cacheDir: setup.workspace.cacheDirectory)
            let lines = result.stderr.split(separator: "\n")
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            #expect(lines.count == 1 && lines[0].contains(message), "\(arguments): \(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)

        let honouring = try await OfflineSetup()
        defer { honouring.remove() }
        try await Self.make(
            "episode.mp3",
            in: honouring.workspace.originDirectory,
            arguments: ["-vn", "-c:a", "libmp3lame"]
        )
        let past = try await CLI.run(
            ["get", honouring.origin.url("episode.mp3"), "--section", "2:00-3:00", "-o", folder + "/b.mp3"],
            cacheDir: honouring.workspace.cacheDirectory
        )
        #expect(past.status == 64 && past.stderr.contains("starts past the end"), "\(past.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/b.mp3"))
    }
}
