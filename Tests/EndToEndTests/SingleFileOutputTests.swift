import Foundation
import StreamCacheTesting
import Testing

/// `download URL -o FILE` and `export ID FILE`: one file that ffmpeg decodes frame for frame as
/// the package, named from a template, in the container its extension says; the bad inputs each
/// get one line and their status, and nothing is lost.
@Suite(.timeLimit(.minutes(3))) struct SingleFileOutputTests {
    /// The codec of each stream of `file`, and its video frames' checksums.
    static func streams(_ file: String) async throws -> (codecs: [String], frames: [String]) {
        // A package's playlist may name .vtt files, which ffmpeg reads only when told to.
        let input = (file.hasSuffix(".m3u8") ? ["-allowed_extensions", "ALL"] : []) + ["-i", file]
        let probed = try await Tool.run(
            "ffprobe",
            ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0"] + input
        )
        #expect(probed.status == 0, "\(probed.stderr)")
        let frames = try await Tool.run("ffmpeg", ["-v", "error"] + input + ["-map", "0:v:0", "-f", "framemd5", "-"])
        return (
            probed.output.split(separator: "\n").map(String.init),
            frames.output.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap {
                $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) }
            }
        )
    }

    @Test func aTemplateInAnEmptyFolderLeavesOneMP4NamedAfterTheTitle() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.multi, in: setup.workspace.originDirectory)
        let master = setup.workspace.originDirectory + "/multi/master.m3u8"
        let text = try String(contentsOfFile: master, encoding: .utf8)
        try text.replacingOccurrences(
            of: "#EXTM3U\n",
            with: "#EXTM3U\n#EXT-X-SESSION-DATA:DATA-ID=\"com.apple.hls.title\","
                + "VALUE=\"Episode 12/13: ../The Pilot\u{202E}4pm.exe\u{200B}\"\n"
        ).write(toFile: master, atomically: true, encoding: .utf8)
        let folder = setup.workspace.outputDirectory
        let result = try await CLI.run(
            [
                "download", setup.origin.url("multi/master.m3u8"), "-o", "%(title)s.%(ext)s", "--audio", "all",
                "--keep-package",
            ],
            cacheDir: setup.workspace.cacheDirectory,
            in: folder
        )
        #expect(result.status == 0, "\(result.stderr)")
        let id = try #require(result.output.split(separator: "\n").last.map(String.init))
        // The title's "/" cannot make a folder, nothing is written outside the folder, and no
        // character reorders the name as it is shown (U+202E) or hides in it (U+200B).
        let name = "Episode 12_13: .._The Pilot_4pm.exe_.mp4"
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == [name])
        let written = try await Self.streams(folder + "/" + name)
        #expect(written.codecs == ["h264", "aac", "aac"], "\(written.codecs)")
        let package = try await Self.streams(setup.library + "/\(id)/master.m3u8")
        #expect(written.frames.count == 60 && written.frames == package.frames)
        let assets = try await setup.assets()
        #expect(assets.map(\.state) == ["complete"], "the package is kept")
    }

    /// A media playlist without `CODECS` says nothing of its tracks: the segments tell, and
    /// `%(ext)s` and the file keep every track they hold (video and audio, video alone, audio
    /// alone), plain, fMP4 and AES-128 alike; so do a DASH MPD's whose `codecs` were taken out.
    @Test(arguments: [
        ("ts/index.m3u8", "x.mp4", ["h264", "aac"]), ("fmp4/index.m3u8", "x.mp4", ["h264", "aac"]),
        ("aes/index.m3u8", "x.mp4", ["h264", "aac"]), ("video/index.m3u8", "x.mp4", ["h264"]),
        ("audio/index.m3u8", "x.m4a", ["aac"]), ("dash/manifest.mpd", "x.mp4", ["h264", "aac"]),
        ("dashvideo/manifest.mpd", "x.mp4", ["h264"]), ("dashaudio/manifest.mpd", "x.m4a", ["aac"]),
    ])
    func aPlaylistWithoutCodecsKeepsEveryTrackItHolds(playlist: String, file: String, codecs: [String]) async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let origin = setup.workspace.originDirectory
        switch playlist {
        case "ts/index.m3u8": try await TestStreams.make(.ts, in: origin)
        case "fmp4/index.m3u8": try await TestStreams.make(.fmp4, in: origin)
        case "aes/index.m3u8": try await TestStreams.make(.aes, in: origin)
        default:
            let folder = origin + "/" + (playlist as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let video = ["-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=4"]
            let audio = ["-f", "lavfi", "-i", "sine=frequency=440:duration=4"]
            let coding = ["-c:v", "libx264", "-g", "10", "-c:a", "aac"]
            let source =
                playlist.hasPrefix("dash/") ? video + audio : playlist.contains("video") ? video : audio
            let muxer =
                playlist.hasSuffix(".mpd")
                ? ["-f", "dash", "-seg_duration", "2"] : ["-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod"]
            let made = try await Tool.run(
                "ffmpeg",
                ["-hide_banner", "-v", "error"] + source + coding + muxer + [origin + "/" + playlist]
            )
            #expect(made.status == 0, "\(made.stderr)")
            if playlist.hasSuffix(".mpd") {
                // No `codecs`: the segments tell what the tracks are.
                let path = origin + "/" + playlist
                let text = try String(contentsOfFile: path, encoding: .utf8)
                let bare = text.replacingOccurrences(of: #" codecs="[^"]*""#, with: "", options: .regularExpression)
                #expect(bare != text)
                try bare.write(toFile: path, atomically: true, encoding: .utf8)
            }
        }
        let folder = setup.workspace.outputDirectory
        let result = try await CLI.run(
            ["download", setup.origin.url(playlist), "-o", "x.%(ext)s"],
            cacheDir: setup.workspace.cacheDirectory,
            in: folder
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == [file])
        let probed = try await Tool.run(
            "ffprobe",
            ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", folder + "/" + file]
        )
        #expect(probed.output.split(separator: "\n").map(String.init) == codecs, "\(probed.output)")
    }

    /// A download with `-o` that stopped (a segment missing) resumes by id, from any folder, and
    /// writes the file its first run was asked for.
    @Test func aResumeByIDWritesTheFileTheFirstRunAskedFor() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.ts, in: setup.workspace.originDirectory)
        let segment = setup.workspace.originDirectory + "/ts/index1.ts"
        let kept = setup.workspace.originDirectory + "/kept.ts"
        try FileManager.default.moveItem(atPath: segment, toPath: kept)
        let folder = setup.workspace.outputDirectory
        let failed = try await CLI.run(
            ["download", setup.origin.url("ts/index.m3u8"), "-o", "show.%(ext)s"],
            cacheDir: setup.workspace.cacheDirectory,
            in: folder
        )
        #expect(failed.status == 22, "\(failed.stderr)")
        let asset = try #require(try await setup.assets().first)

        try FileManager.default.moveItem(atPath: kept, toPath: segment)
        let resumed = try await CLI.run(
            ["download", asset.id],
            cacheDir: setup.workspace.cacheDirectory,
            in: setup.workspace.originDirectory
        )
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["show.mp4"])
        #expect(try await Self.streams(folder + "/show.mp4").codecs == ["h264", "aac"])
        #expect(try await setup.assets().isEmpty, "the package stayed beside the file")
    }

    @Test func anMKVKeepsTheSubtitlesAndExportWritesThePackageAgain() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.multi, in: setup.workspace.originDirectory)
        let folder = setup.workspace.outputDirectory
        let result = try await setup.download(
            "multi/master.m3u8",
            ["-o", folder + "/x.mkv", "--subtitles", "all", "--keep-package"]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let id = try #require(result.output.split(separator: "\n").last.map(String.init))
        #expect(try await Self.streams(folder + "/x.mkv").codecs == ["h264", "aac", "webvtt"])

        // Again from the package alone, by a prefix of its id, with the origin stopped.
        try await setup.origin.stop()
        let exported = try await CLI.run(
            ["export", String(id.prefix(6)), folder + "/again-%(height)s.mp4"],
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(exported.status == 0, "\(exported.stderr)")
        let again = try await Self.streams(folder + "/again-120.mp4")
        #expect(again.codecs == ["h264", "aac", "mov_text"], "\(again.codecs)")
        #expect(again.frames == (try await Self.streams(folder + "/x.mkv")).frames)
    }

    /// By default, as yt-dlp leaves one file, the package goes once the file is written.
    @Test func anEncryptedPackageIsWrittenDecryptedAndOnlyTheFileStays() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.aes, in: setup.workspace.originDirectory)
        let reference = try await Self.streams(setup.origin.url("aes/index.m3u8"))
        let output = setup.workspace.outputDirectory + "/show.ts"
        let result = try await setup.download("aes/index.m3u8", ["-o", output, "--keep-encryption"])
        #expect(result.status == 0, "\(result.stderr)")
        let written = try await Self.streams(output)
        #expect(written.frames.count == 60 && written.frames == reference.frames)
        #expect(try await setup.assets().isEmpty, "the package was kept beside the file")
    }

    /// Each bad `-o`: one line, its status, before any segment is fetched.
    @Test(arguments: [
        (["-o", "no/such/folder/x.mp4"], Int32(23), "does not exist"),
        (["-o", "x"], 64, "has no extension"),
        (["-o", "x.avi"], 64, "'.avi' is not a container"),
        (["-o", "%(uploader)s.mp4"], 64, "unknown field %(uploader)s"),
        (["--no-package"], 64, "--no-package goes with -o"),
        (["--keep-package"], 64, "--keep-package goes with -o"),
    ])
    func aBadOutputIsRefusedBeforeAnySegment(arguments: [String], status: Int32, says: String) async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.ts, in: setup.workspace.originDirectory)
        let result = try await CLI.run(
            ["download", setup.origin.url("ts/index.m3u8")] + arguments,
            cacheDir: setup.workspace.cacheDirectory,
            in: setup.workspace.outputDirectory
        )
        #expect(result.status == status, "\(result.stderr)")
        #expect(
            result.stderr.split(separator: "\n").count == 1 && result.stderr.contains(says),
            "\(result.stderr)"
        )
        let requested = try await setup.origin.stats().requests.map(\.path)
        #expect(!requested.contains { $0.hasSuffix(".ts") }, "\(requested)")
    }

    /// Without ffmpeg the command says so before the download; with an ffmpeg that fails mid-mux
    /// the package is kept, the line says where, and no partial file is left; an existing file
    /// is not replaced without `--force`.
    @Test func ffmpegMissingOrFailingAndAFileThatIsThere() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.ts, in: setup.workspace.originDirectory)
        let folder = setup.workspace.outputDirectory
        let tools = setup.workspace.originDirectory + "/tools"
        try FileManager.default.createDirectory(atPath: tools, withIntermediateDirectories: true)
        let arguments = ["download", setup.origin.url("ts/index.m3u8"), "-o", "out.mp4"]

        let missing = try await CLI.run(arguments, cacheDir: setup.workspace.cacheDirectory, in: folder, path: tools)
        #expect(missing.status == 1)
        #expect(missing.stderr.split(separator: "\n").count == 1 && missing.stderr.contains("apt-get install ffmpeg"))
        #expect(try await setup.origin.stats().requests.isEmpty)

        // An ffmpeg that writes half a file and fails.
        try "#!/bin/sh\nfor last; do :; done\nhead -c 1000 /dev/zero > \"$last\"\necho 'disk on fire' >&2\nexit 1\n"
            .write(toFile: tools + "/ffmpeg", atomically: true, encoding: .utf8)
        chmod(tools + "/ffmpeg", 0o755)
        let failing = try await CLI.run(arguments, cacheDir: setup.workspace.cacheDirectory, in: folder, path: tools)
        #expect(failing.status == 1)
        let errors = failing.stderr.split(separator: "\n").filter { $0.hasPrefix("streamcache: error:") }
        #expect(errors.count == 1 && errors[0].contains("disk on fire") && errors[0].contains("the package is kept"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty, "a partial file was left")
        #expect(try await setup.assets().map(\.state) == ["complete"])

        // A file that is there, and a folder named as the file: said before any segment.
        try Data("mine".utf8).write(to: URL(fileURLWithPath: folder + "/out.mp4"))
        try FileManager.default.createDirectory(atPath: folder + "/dir.mkv", withIntermediateDirectories: true)
        let requestsBefore = try await setup.origin.stats().requests.count
        let there = try await CLI.run(arguments, cacheDir: setup.workspace.cacheDirectory, in: folder)
        #expect(there.status == 23 && there.stderr.contains("exists; --force replaces it"), "\(there.stderr)")
        #expect(try String(contentsOfFile: folder + "/out.mp4", encoding: .utf8) == "mine")
        let intoFolder = try await CLI.run(
            Array(arguments.dropLast()) + ["dir.mkv"],
            cacheDir: setup.workspace.cacheDirectory,
            in: folder
        )
        #expect(intoFolder.status == 23 && intoFolder.stderr.contains("is a directory"), "\(intoFolder.stderr)")
        #expect(try await setup.origin.stats().requests.count == requestsBefore, "a refused -o fetched")
        let forced = try await CLI.run(arguments + ["--force"], cacheDir: setup.workspace.cacheDirectory, in: folder)
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(try await Self.streams(folder + "/out.mp4").frames.count == 60)
    }
}

/// Any unique prefix of 4 characters or more names a package wherever an id does; one that
/// names two is refused listing both, and nothing is removed.
@Suite(.timeLimit(.minutes(2))) struct PackageIDPrefixTests {
    @Test func aPrefixNamesOnePackageAndAPrefixOfTwoListsBoth() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.ts, in: setup.workspace.originDirectory)
        let result = try await setup.download("ts/index.m3u8")
        let id = try #require(result.output.split(separator: "\n").last.map(String.init))
        // A second package whose id shares the first 4 characters, and only those.
        let fifth = id[id.index(id.startIndex, offsetBy: 4)] == "f" ? "0" : "f"
        let other = id.prefix(4) + String(repeating: fifth, count: 12)
        try FileManager.default.copyItem(atPath: setup.library + "/" + id, toPath: setup.library + "/" + other)
        let manifest = setup.library + "/\(other)/asset.json"
        try String(contentsOfFile: manifest, encoding: .utf8).replacingOccurrences(of: id, with: other)
            .write(toFile: manifest, atomically: true, encoding: .utf8)

        let ambiguous = try await CLI.run(
            ["hls", "rm", String(id.prefix(4))],
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(ambiguous.status == 1)
        #expect(
            ambiguous.stderr.split(separator: "\n").count == 1 && ambiguous.stderr.contains(id)
                && ambiguous.stderr.contains(other) && ambiguous.stderr.contains("names 2 assets"),
            "\(ambiguous.stderr)"
        )
        #expect(try await setup.assets().count == 2, "a package was removed")

        let tooShort = try await CLI.run(["hls", "rm", String(id.prefix(3))], cacheDir: setup.workspace.cacheDirectory)
        #expect(tooShort.status == 1 && tooShort.stderr.contains("no asset \(id.prefix(3))"), "\(tooShort.stderr)")

        let exported = try await CLI.run(
            ["export", String(id.prefix(5)), setup.workspace.outputDirectory + "/x.ts"],
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(exported.status == 0, "\(exported.stderr)")
        let removed = try await CLI.run(["hls", "rm", String(id.prefix(6))], cacheDir: setup.workspace.cacheDirectory)
        #expect(removed.status == 0 && removed.output == "removed \(id)\n", "\(removed.stderr)")
        #expect(try await setup.assets().map(\.id) == [String(other)])
    }
}
