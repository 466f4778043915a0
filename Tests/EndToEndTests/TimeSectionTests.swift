import Foundation
import StreamCacheTesting
import Testing

/// `download URL --section START-END`: only the segments that play in the section are fetched
/// (with each rendition's first segment, where the timeline begins), checked in the origin's
/// log; `-o` decodes to the same frames as ffmpeg's `-ss/-to` cut of the whole stream; a second
/// section fetches only what the first did not; bad sections get one line and exit 64 before any
/// segment is fetched.
@Suite(.timeLimit(.minutes(5))) struct TimeSectionTests {
    /// A minute of 2 s segments made by ffmpeg, as TS HLS, fMP4 HLS or DASH, and its playlist
    /// or MPD relative to the origin's folder.
    static func make(_ kind: String, in origin: String) async throws -> String {
        switch kind {
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

    @Test(arguments: ["ts", "fmp4", "dash"])
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
        if kind != "dash" {
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
    /// the section's segments, from the first one kept.
    @Test func aSecondSectionFetchesOnlyWhatTheFirstDidNot() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let stream = try await Self.make("ts", in: setup.workspace.originDirectory)
        let first = try await setup.download(stream, ["--section", "21.3-33.7"], command: ["download"])
        #expect(first.status == 0, "\(first.stderr)")
        let before = Self.segments(try await setup.origin.settledStats())
        let second = try await setup.download(stream, ["--section", "30-40"], command: ["download"])
        #expect(second.status == 0, "\(second.stderr)")
        let stats = try await setup.origin.settledStats()
        #expect(stats.duplicateBytes == 0, "the origin sent \(stats.duplicateBytes) bytes twice")
        #expect(Self.segments(stats).subtracting(before) == Set((17...19).map { "/ts/index\($0).ts" }))

        let id = try #require(second.output.split(separator: "\n").last.map(String.init))
        let playlist = try String(contentsOfFile: setup.library + "/\(id)/video/index.m3u8", encoding: .utf8)
        let listed = playlist.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(listed == (15...19).map { String(format: "%05d.ts", $0)[...] }, "\(playlist)")
        let assets = try await setup.assets()
        #expect(assets.count == 2 && assets.allSatisfy { $0.state == "complete" })
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
            (["--section", "ten-20"], "is not a time"),
            (["--section", "1:75-2:00"], "is not a time"),
            (["--section", "10-20", "--section", "30-40", "-o", output], "-o writes one section"),
            (["--section", "10-20", "--duration", "30s"], "record a live one"),
        ]
        for (arguments, message) in cases {
            let result = try await setup.download(stream, arguments, command: ["download"])
            let lines = result.stderr.split(separator: "\n")
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(lines.count == 1 && lines[0].contains(message), "\(arguments): \(result.stderr)")
        }
        let file = try await setup.download("ts/episode.mp4", ["--section", "10-20"], command: ["download"])
        #expect(file.status == 64 && file.stderr.contains("fetched whole"), "\(file.stderr)")
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
