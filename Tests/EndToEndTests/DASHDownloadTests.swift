import Foundation
import StreamCache
import StreamCacheHTTP
import StreamCacheOffline
import StreamCacheTesting
import Testing

/// `streamcache download` (and `hls download`) of a DASH MPD: a package whose `manifest.mpd` plays from disk frame for frame
/// as the chosen representations' own files, and through `serve` with the origin stopped; DRM is
/// refused in one line, naming the system.
@Suite(.timeLimit(.minutes(3))) struct DASHDownloadTests {
    /// The video representation's frames, decoded from the origin's own files put end to end
    /// (its initialization segment, then its media segments, or its one file).
    static func referenceFrames(_ shape: DASHThroughServeTests.Shape, folder: String) async throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        let files: [String]
        switch shape {
        case .singleFile: files = names.filter { $0.hasSuffix("-stream0.mp4") }
        default: files = names.filter { $0.hasPrefix("init-stream0") } + names.filter { $0.hasPrefix("chunk-stream0-") }
        }
        var joined = Data()
        for file in files { joined += try Data(contentsOf: URL(fileURLWithPath: folder + "/" + file)) }
        let reference = folder + "/reference-video.mp4"
        try joined.write(to: URL(fileURLWithPath: reference))
        return try await videoFrames(reference)
    }

    /// The first video stream's frames.
    static func videoFrames(_ source: String) async throws -> [String] {
        try await DASHThroughServeTests.frames(source, map: "0:v:0")
    }

    @Test(arguments: DASHThroughServeTests.Shape.allCases.filter { $0 != .absoluteBase })
    func eachShapeIsDownloadedAndPlaysFromDiskAndThroughServeOffline(shape: DASHThroughServeTests.Shape) async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/dash"
        try await DASHThroughServeTests.make(shape, in: folder)
        let result = try await setup.download("dash/manifest.mpd", [], command: ["download"])
        #expect(result.status == 0, "\(shape): \(result.stderr)")
        let id = try #require(result.output.split(separator: "\n").last.map { String($0) })
        let package = setup.library + "/" + id
        let expected = try await Self.referenceFrames(shape, folder: folder)
        let fromDisk = try await Self.videoFrames(package + "/manifest.mpd")
        #expect(
            fromDisk.count == 80 && fromDisk == expected,
            "\(shape): \(fromDisk.count) frames, \(expected.count) expected"
        )

        _ = try await setup.origin.end(with: SIGKILL)
        let proxy = try await ListeningProcess(["serve"], cacheDir: setup.workspace.cacheDirectory)
        let served = try await Self.videoFrames(proxy.url("offline/\(id)/manifest.mpd"))
        #expect(served == fromDisk, "\(shape): \(served.count) frames through serve with the origin stopped")
        let assets = try await setup.assets()
        #expect(assets.first?.state == "complete" && assets.first?.path.hasSuffix("/manifest.mpd") == true)
    }

    /// An MPD at a path that names no format (`/dash/show`, served as an octet stream) is DASH by
    /// its bytes, as the proxy takes it: the package plays as the `.mpd` one does.
    @Test func anMPDKnownByItsBytesIsDownloadedAsDASH() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/dash"
        try await DASHThroughServeTests.make(.number, in: folder)
        try FileManager.default.copyItem(atPath: folder + "/manifest.mpd", toPath: folder + "/show")
        let result = try await setup.download("dash/show", [], command: ["download"])
        #expect(result.status == 0, "\(result.stderr)")
        let id = try #require(result.output.split(separator: "\n").last.map { String($0) })
        let fromDisk = try await Self.videoFrames(setup.library + "/" + id + "/manifest.mpd")
        #expect(fromDisk == (try await Self.referenceFrames(.number, folder: folder)))
    }

    @Test func aProtectedRepresentationIsRefusedNamingItsSystem() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let mpd = """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT8S">
              <Period><AdaptationSet mimeType="video/mp4">
                <ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011" value="cenc"/>
                <ContentProtection schemeIdUri="urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed"/>
                <SegmentTemplate timescale="1" duration="2" media="$Number$.m4s" initialization="init.mp4"/>
                <Representation id="v" bandwidth="1000" width="320" height="240"/>
              </AdaptationSet></Period>
            </MPD>
            """
        try mpd.write(toFile: setup.workspace.originDirectory + "/drm.mpd", atomically: true, encoding: .utf8)
        let result = try await setup.download("drm.mpd", [], command: ["download"])
        #expect(result.status == 1)
        #expect(
            result.stderr.split(separator: "\n").count == 1 && result.stderr.contains("Widevine"),
            "\(result.stderr)"
        )
        let requested = try await setup.origin.stats().requests.map(\.path)
        #expect(requested == ["/drm.mpd"], "\(requested)")
    }

    /// The timeline stream in `folder`, and `subs.mpd`: its MPD with English and French WebVTT
    /// representations (`subs-en.vtt`, `subs-fr.vtt`, each one whole file) added; their texts.
    static func makeSubtitled(in folder: String) async throws -> (english: String, french: String) {
        try await DASHThroughServeTests.make(.timeline, in: folder)
        let english = "WEBVTT\n\n00:00.000 --> 00:04.000\nHello\n\n00:04.000 --> 00:08.000\nAgain\n"
        let french = english.replacingOccurrences(of: "Hello", with: "Bonjour")
        try english.write(toFile: folder + "/subs-en.vtt", atomically: true, encoding: .utf8)
        try french.write(toFile: folder + "/subs-fr.vtt", atomically: true, encoding: .utf8)
        let sets = ["en", "fr"].map { language in
            """
            <AdaptationSet contentType="text" mimeType="text/vtt" lang="\(language)">
            <Representation id="sub-\(language)" bandwidth="256"><BaseURL>subs-\(language).vtt</BaseURL></Representation>
            </AdaptationSet>
            """
        }
        let mpd = try String(contentsOfFile: folder + "/manifest.mpd", encoding: .utf8)
        try mpd.replacingOccurrences(of: "</Period>", with: sets.joined() + "</Period>")
            .write(toFile: folder + "/subs.mpd", atomically: true, encoding: .utf8)
        return (english, french)
    }

    /// Text by language, as for HLS subtitles: `--subtitles fr -o show.mkv` downloads the French
    /// WebVTT representation (one whole file), lists it in the package's MPD, which ffprobe reads
    /// with its video and audio, and keeps it in the one file; a language none has is refused in
    /// one line before any segment is asked for.
    @Test func subtitlesAreChosenByLanguage() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let (_, french) = try await Self.makeSubtitled(in: setup.workspace.originDirectory + "/dash")

        let refused = try await setup.download("dash/subs.mpd", ["--subtitles", "de"], command: ["download"])
        #expect(refused.status == 1)
        #expect(
            refused.stderr.split(separator: "\n").count == 1
                && refused.stderr.contains("no subtitles in de; there is en, fr"),
            "\(refused.stderr)"
        )
        let requested = try await setup.origin.stats().requests.map(\.path)
        #expect(requested == ["/dash/subs.mpd"], "\(requested)")

        let file = setup.workspace.outputDirectory + "/show.mkv"
        let result = try await setup.download(
            "dash/subs.mpd",
            ["--subtitles", "fr", "-o", file, "--keep-package"],
            command: ["download"]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let id = try #require(result.output.split(separator: "\n").last.map { String($0) })
        let package = setup.library + "/" + id
        #expect(try String(contentsOfFile: package + "/subtitles-fr/media.vtt", encoding: .utf8) == french)
        #expect(!FileManager.default.fileExists(atPath: package + "/subtitles-en"))
        let local = try String(contentsOfFile: package + "/manifest.mpd", encoding: .utf8)
        #expect(
            local.contains("<BaseURL>subtitles-fr/media.vtt</BaseURL>") && local.contains("lang=\"fr\""),
            "\(local)"
        )
        // ffmpeg reads a .vtt named in an MPD only when told to (as for the origin's own MPD).
        let probed = try await Tool.run(
            "ffprobe",
            [
                "-v", "error", "-allowed_extensions", "ALL", "-show_entries", "stream=codec_name", "-of", "csv=p=0",
                package + "/manifest.mpd",
            ]
        )
        #expect(probed.status == 0, "\(probed.stderr)")
        #expect(
            Set(probed.output.split(separator: "\n").map(String.init)) == ["h264", "aac", "webvtt"],
            "\(probed.output)"
        )
        #expect(try await setup.assets().first?.subtitles == ["fr"])
        // One file as well: every frame, the audio and the French track.
        let written = try await SingleFileOutputTests.streams(file)
        #expect(
            written.codecs == ["h264", "aac", "webvtt"] && written.frames.count == 80,
            "\(written.codecs) \(written.frames.count)"
        )
    }

    /// Text and audio added to a DASH package later, as to an HLS one: the representations it
    /// holds keep their folders and files (none is fetched or written again), the added one's
    /// file is fetched and listed in the package's MPD, and a language none has is refused
    /// naming those there are.
    @Test func renditionsAreAddedToAPackageLater() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let (english, _) = try await Self.makeSubtitled(in: setup.workspace.originDirectory + "/dash")
        let result = try await setup.download("dash/subs.mpd", ["--subtitles", "fr"], command: ["download"])
        #expect(result.status == 0, "\(result.stderr)")
        let id = try #require(result.output.split(separator: "\n").last.map { String($0) })
        let package = setup.library + "/" + id
        let held = try FolderListing.modificationTimes(in: package)
        let requestsBefore = try await setup.origin.settledStats().requests.count

        let engine = try CacheEngine(
            directory: CacheDirectory(path: setup.workspace.cacheDirectory),
            origin: HTTPOriginClient()
        )
        let library = OfflineLibrary(directory: setup.library)
        var finished = false
        for await event in library.addMediaSelection(to: id, subtitles: .only(["en"]), engine: engine) {
            if case .finished(let asset, _) = event { finished = asset == id }
            if case .failed(let error) = event { Issue.record("adding failed: \(error)") }
        }
        #expect(finished)
        #expect(try String(contentsOfFile: package + "/subtitles-en/media.vtt", encoding: .utf8) == english)
        let now = try FolderListing.modificationTimes(in: package)
        for (path, modified) in held where !path.hasSuffix(".mpd") && !path.hasSuffix(".json") {
            #expect(now[path] == modified, "\(path) was written again")
        }
        let local = try String(contentsOfFile: package + "/manifest.mpd", encoding: .utf8)
        #expect(
            local.contains("<BaseURL>subtitles-fr/media.vtt</BaseURL>")
                && local.contains("<BaseURL>subtitles-en/media.vtt</BaseURL>"),
            "\(local)"
        )
        // The MPD, checked with the origin, and the one new file: no segment asked for again.
        let asked = try await setup.origin.settledStats().requests.dropFirst(requestsBefore).map(\.path)
        #expect(asked.sorted() == ["/dash/subs-en.vtt", "/dash/subs.mpd"], "\(asked)")
        #expect(try await setup.assets().first?.subtitles == ["fr", "en"])

        var failure: OfflineError?
        for await event in library.addMediaSelection(to: id, subtitles: .only(["de"]), engine: engine) {
            if case .failed(let error) = event { failure = error }
        }
        #expect(
            failure?.kind == .noMatchingRendition && failure?.message.contains("en, fr") == true,
            "\(failure?.message ?? "no failure")"
        )
        await engine.shutdown()
    }

    /// A `$Number$` template whose `startNumber` is past the segments the origin has: the first
    /// segment's 404 is said in one line naming it, asked for once, and the package is kept as
    /// failed, not complete.
    @Test func aNumberThatStartsPastTheEndFailsOnItsFirstSegment() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/dash"
        try await DASHThroughServeTests.make(.number, in: folder)
        let mpd = try String(contentsOfFile: folder + "/manifest.mpd", encoding: .utf8)
        #expect(mpd.contains("startNumber=\"1\""))
        try mpd.replacingOccurrences(of: "startNumber=\"1\"", with: "startNumber=\"1000\"")
            .write(toFile: folder + "/past.mpd", atomically: true, encoding: .utf8)
        let result = try await setup.download("dash/past.mpd", [], command: ["download"])
        #expect(result.status != 0)
        let lines = result.stderr.split(separator: "\n").filter { $0.contains("error") }
        #expect(lines.count == 1 && lines[0].contains("01000.m4s") && lines[0].contains("404"), "\(result.stderr)")
        let requested = try await setup.origin.stats().requests.map(\.path).filter { $0.hasSuffix(".m4s") }
        #expect(requested.count == Set(requested).count, "a 404 asked again: \(requested)")
        let assets = try await setup.assets()
        #expect(assets.map(\.state) == ["failed"])
    }

    /// A dynamic MPD whose `availabilityStartTime` is years away: `hls inspect` says it has not
    /// begun; a download is refused in one line before any segment is asked for.
    @Test func aLiveMPDThatHasNotBegunIsShownAndNotDownloaded() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let mpd = """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="2100-01-01T00:00:00Z"
                 minimumUpdatePeriod="PT2S" timeShiftBufferDepth="PT30S">
              <Period start="PT0S"><AdaptationSet mimeType="video/mp4">
                <SegmentTemplate timescale="1" duration="2" media="$Number$.m4s" initialization="init.mp4"/>
                <Representation id="v" bandwidth="1000" width="320" height="240"/>
              </AdaptationSet></Period>
            </MPD>
            """
        try mpd.write(toFile: setup.workspace.originDirectory + "/future.mpd", atomically: true, encoding: .utf8)
        let inspected = try await CLI.run(
            ["hls", "inspect", setup.origin.url("future.mpd")],
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(inspected.status == 0, "\(inspected.stderr)")
        #expect(inspected.output.contains("available from 2100-01-01T00:00:00Z (not yet"), "\(inspected.output)")
        #expect(inspected.output.contains("segments made as it goes (live)"), "\(inspected.output)")
        let result = try await setup.download("future.mpd", [], command: ["download"])
        #expect(result.status == 1)
        #expect(
            result.stderr.split(separator: "\n").count == 1 && result.stderr.contains("live (dynamic) MPD"),
            "\(result.stderr)"
        )
        let requested = try await setup.origin.stats().requests.map(\.path)
        #expect(Set(requested) == ["/future.mpd"], "\(requested)")
    }

    /// ffmpeg's DASH presentation of a minute of 2 s segments (160x120 video at 10 frames a
    /// second, and audio if asked): live for a whole test, whatever its pace, from `origin --live`.
    static func makeMinute(in folder: String, audio: Bool) async throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let sound = audio ? ["-f", "lavfi", "-i", "sine=frequency=440:duration=60", "-c:a", "aac"] : []
        let made = try await Tool.run(
            "ffmpeg",
            ["-hide_banner", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=60"] + sound
                + [
                    "-c:v", "libx264", "-preset", "ultrafast", "-g", "10", "-f", "dash", "-seg_duration", "2",
                    folder + "/manifest.mpd",
                ]
        )
        try #require(made.status == 0, "\(made.stderr)")
    }

    /// `streamcache origin DIR --live` serves ffmpeg's static MPD as a live presentation: ffprobe
    /// reads its streams from the dynamic MPD and `packages inspect` calls it live. `download`
    /// records it: each segment is the origin's file of the same time, the package plays from
    /// disk and through `serve` with the origin stopped, and a second run goes on after the
    /// first's last segment, keeping every file it had.
    @Test func aLiveMPDIsRecordedAndARecordingRunAgainGoesOn() async throws {
        let setup = try await OfflineSetup(originArguments: ["--live", "--window", "2"])
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/dash"
        try await Self.makeMinute(in: folder, audio: true)
        let url = setup.origin.url("dash/manifest.mpd")
        let served = try await Tool.run("curl", ["-s", "-D", "-", url])
        #expect(served.output.contains("Content-Type: application/dash+xml"), "\(served.output)")
        #expect(served.output.contains("type=\"dynamic\"") && served.output.contains("availabilityStartTime="))
        let probed = try await Tool.run(
            "ffprobe",
            ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", url]
        )
        #expect(probed.status == 0, "\(probed.stderr)")
        #expect(Set(probed.output.split(separator: "\n").map(String.init)) == ["h264", "aac"], "\(probed.output)")
        let inspected = try await CLI.run(["packages", "inspect", url], cacheDir: setup.workspace.cacheDirectory)
        #expect(inspected.output.contains("(live)"), "\(inspected.output)")

        let first = try await setup.download("dash/manifest.mpd", ["--duration", "6"], command: ["download"])
        try #require(first.status == 0, "\(first.stderr)")
        let id = try #require(first.output.split(separator: "\n").last.map { String($0) })
        let package = setup.library + "/" + id
        /// The package's video files, oldest first, each named by its start in milliseconds.
        func videoFiles() throws -> [(start: Int, path: String)] {
            try FileManager.default.contentsOfDirectory(atPath: package + "/video").compactMap { name in
                guard name.hasSuffix(".m4s"), let start = Int(name.dropLast(4)) else { return nil }
                return (start, package + "/video/" + name)
            }.sorted { $0.start < $1.start }
        }
        let recorded = try videoFiles()
        #expect(recorded.count >= 3, "\(recorded.map(\.start))")
        // Each file is the origin's segment of its time (2 s segments numbered from 1), the
        // first recorded at the package's 0: the package's clock starts at the earliest track,
        // and audio segments end a few milliseconds off the video's, so a file is the segment
        // its middle falls in.
        let asset = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: package + "/asset.json"))
        )
        let origin = try #require(((asset as? [String: Any])?["recording"] as? [String: Any])?["origin"] as? Double)
        func originFile(_ start: Int) -> String {
            folder
                + String(format: "/chunk-stream0-%05d.m4s", (start + Int((origin * 1000).rounded()) + 1000) / 2000 + 1)
        }
        for file in recorded {
            #expect(
                FileManager.default.contentsEqual(atPath: file.path, andPath: originFile(file.start)),
                "\(file.path)"
            )
        }
        var joined = try Data(contentsOf: URL(fileURLWithPath: folder + "/init-stream0.m4s"))
        for file in recorded { joined += try Data(contentsOf: URL(fileURLWithPath: originFile(file.start))) }
        try joined.write(to: URL(fileURLWithPath: folder + "/recorded.mp4"))
        let expected = try await Self.videoFrames(folder + "/recorded.mp4")
        let fromDisk = try await Self.videoFrames(package + "/manifest.mpd")
        #expect(fromDisk.count == recorded.count * 20 && fromDisk == expected, "\(fromDisk.count) frames")
        let text = try String(contentsOfFile: package + "/manifest.mpd", encoding: .utf8)
        #expect(text.contains("type=\"static\""))

        let again = try await setup.download("dash/manifest.mpd", ["--duration", "10"], command: ["download"])
        #expect(again.status == 0, "\(again.stderr)")
        let grown = try videoFiles()
        #expect(
            Array(grown.prefix(recorded.count).map(\.start)) == recorded.map(\.start) && grown.count > recorded.count
        )
        for file in grown {
            #expect(
                FileManager.default.contentsEqual(atPath: file.path, andPath: originFile(file.start)),
                "\(file.path)"
            )
        }

        _ = try await setup.origin.end(with: SIGKILL)
        let proxy = try await ListeningProcess(["serve"], cacheDir: setup.workspace.cacheDirectory)
        let throughServe = try await Self.videoFrames(proxy.url("offline/\(id)/manifest.mpd"))
        let played = try await Self.videoFrames(package + "/manifest.mpd")
        #expect(
            throughServe == played && played.count == grown.count * 20,
            "\(throughServe.count) frames through serve"
        )
    }

    /// dash.js's dynamic MPD (a 2012 presentation of 260 s, segments by number from 0 in a folder
    /// per representation), served with ffmpeg's media under its names: `--from-start` records
    /// all 65 segments of its smallest video and its audio, and the recording ends as the
    /// presentation did, at once, playing frame for frame as the origin's files.
    @Test func aThirdPartyLiveMPDThatHasEndedIsRecordedWhole() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/dashjs"
        let made = folder + "/made"
        try FileManager.default.createDirectory(atPath: made, withIntermediateDirectories: true)
        let encoded = try await Tool.run(
            "ffmpeg",
            [
                "-hide_banner", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x180:rate=25:duration=264",
                "-f", "lavfi", "-i", "sine=frequency=440:duration=264:sample_rate=48000", "-c:v", "libx264",
                "-preset", "ultrafast", "-g", "100", "-c:a", "aac", "-f", "dash", "-seg_duration", "4",
                "-use_timeline", "0", made + "/manifest.mpd",
            ]
        )
        try #require(encoded.status == 0, "\(encoded.stderr)")
        for (stream, id) in [("0", "video5"), ("1", "audio")] {
            try FileManager.default.createDirectory(atPath: folder + "/" + id, withIntermediateDirectories: true)
            try FileManager.default.moveItem(
                atPath: made + "/init-stream\(stream).m4s",
                toPath: folder + "/\(id)/Header.m4s"
            )
            for number in 0...65 {
                let source = made + String(format: "/chunk-stream%@-%05d.m4s", stream, number + 1)
                guard FileManager.default.fileExists(atPath: source) else { break }
                try FileManager.default.moveItem(atPath: source, toPath: folder + "/\(id)/\(number).m4s")
            }
        }
        try FileManager.default.copyItem(
            atPath: Fixtures.path("dash/dashjs/DynamicManifest.mpd"),
            toPath: folder + "/live.mpd"
        )
        let result = try await setup.download(
            "dashjs/live.mpd",
            ["--from-start", "--max-bitrate", "400k"],
            command: ["download"]
        )
        // A recording that waited for a segment of a presentation that ended would stall and fail.
        #expect(result.status == 0, "\(result.stderr)")
        let id = try #require(result.output.split(separator: "\n").last.map { String($0) })
        let package = setup.library + "/" + id
        let recorded = try FileManager.default.contentsOfDirectory(atPath: package + "/video").filter {
            $0.hasSuffix(".m4s")
        }
        #expect(recorded.count == 65, "\(recorded.count) segments")
        var joined = try Data(contentsOf: URL(fileURLWithPath: folder + "/video5/Header.m4s"))
        for number in 0..<65 { joined += try Data(contentsOf: URL(fileURLWithPath: folder + "/video5/\(number).m4s")) }
        try joined.write(to: URL(fileURLWithPath: folder + "/video5.mp4"))
        // Frame by frame (their checksums: the package's timeline counts from its first segment).
        let expected = try await SeveralPeriodsTests.checksums(folder + "/video5.mp4")
        let fromDisk = try await SeveralPeriodsTests.checksums(package + "/manifest.mpd")
        #expect(fromDisk.count >= 6000 && fromDisk == expected, "\(fromDisk.count) frames of \(expected.count)")
    }

    /// While a live MPD is recorded, `serve` plays the package's MPD from its first second with
    /// what is durable so far; a signal ends the recording with the package static and whole.
    @Test func aRecordingPlaysThroughServeFromItsFirstSecondWhileItRecords() async throws {
        let setup = try await OfflineSetup(originArguments: ["--live", "--window", "2"])
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/dash"
        try await Self.makeMinute(in: folder, audio: false)
        let proxy = try await ListeningProcess(["serve"], cacheDir: setup.workspace.cacheDirectory)
        let (process, output, errors) = try CLI.start(
            ["download", setup.origin.url("dash/manifest.mpd"), "--json"],
            cacheDir: setup.workspace.cacheDirectory
        )
        let selection = try await output.firstLine()
        let id = try #require(
            (try? JSONSerialization.jsonObject(with: Data(selection.utf8)) as? [String: Any])?["id"] as? String,
            "\(selection)"
        )
        let package = setup.library + "/" + id
        let deadline = ContinuousClock.now + .seconds(30)
        var listed: [String] = []
        while listed.count < 4, .now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            listed = ((try? FileManager.default.contentsOfDirectory(atPath: package + "/video")) ?? []).filter {
                $0.hasSuffix(".m4s")
            }
        }
        let served = try await Self.videoFrames(proxy.url("offline/\(id)/manifest.mpd"))
        kill(process.processIdentifier, SIGINT)
        try await onOwnThread { process.waitUntilExit() }
        let stderr = try await errors.text()
        #expect(process.terminationStatus == 0, "\(stderr)")
        let whole = try await Self.videoFrames(package + "/manifest.mpd")
        // What was listed when it was asked for plays from the package's first frame on.
        #expect(served.count >= 40 && Array(whole.prefix(served.count)) == served, "\(served.count) of \(whole.count)")
        let text = try String(contentsOfFile: package + "/manifest.mpd", encoding: .utf8)
        #expect(text.contains("type=\"static\"") && whole.count > served.count - 1)
    }

    /// The top-level boxes of an MP4 file: type and byte range.
    static func boxes(_ path: String) throws -> [(type: String, range: ClosedRange<Int>)] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var boxes: [(String, ClosedRange<Int>)] = []
        var position = 0
        while position + 8 <= bytes.count {
            let size = bytes[position..<position + 4].reduce(0) { $0 << 8 | Int($1) }
            guard size >= 8 else { break }
            boxes.append(
                (String(decoding: bytes[position + 4..<position + 8], as: UTF8.self), position...(position + size - 1))
            )
            position += size
        }
        return boxes
    }

    /// An on-demand MPD: one file per representation with a global `sidx` (ffmpeg's mp4 muxer,
    /// `-movflags +global_sidx`), addressed by `SegmentBase` `indexRange`: the package holds each
    /// subsegment once, and plays frame for frame as the file.
    /// An on-demand presentation in `folder`: one fragmented MP4 with a global `sidx` (as
    /// ffmpeg's mp4 muxer writes with `-movflags +global_sidx`), and `manifest.mpd` naming it by
    /// a `SegmentBase` with its `indexRange`; returns the file's top-level boxes.
    static func makeOnDemand(in folder: String) async throws -> [(type: String, range: ClosedRange<Int>)] {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let made = try await Tool.run(
            "ffmpeg",
            [
                "-hide_banner", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=10:duration=8",
                "-c:v", "libx264", "-preset", "ultrafast", "-g", "20", "-movflags",
                "+frag_keyframe+global_sidx+empty_moov+default_base_moof", "-frag_duration", "2000000",
                folder + "/v.mp4",
            ]
        )
        #expect(made.status == 0, "\(made.stderr)")
        let boxes = try Self.boxes(folder + "/v.mp4")
        let moov = try #require(boxes.first { $0.type == "moov" })
        let sidx = try #require(boxes.first { $0.type == "sidx" })
        let mpd = """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT8S"
                 profiles="urn:mpeg:dash:profile:isoff-on-demand:2011">
              <Period><AdaptationSet mimeType="video/mp4" contentType="video">
                <Representation id="v" bandwidth="200000" width="320" height="240" codecs="avc1.f4000b">
                  <BaseURL>v.mp4</BaseURL>
                  <SegmentBase indexRange="\(sidx.range.lowerBound)-\(sidx.range.upperBound)">
                    <Initialization range="0-\(moov.range.upperBound)"/>
                  </SegmentBase>
                </Representation>
              </AdaptationSet></Period>
            </MPD>
            """
        try mpd.write(toFile: folder + "/manifest.mpd", atomically: true, encoding: .utf8)
        return boxes
    }

    @Test func anOnDemandRepresentationIsDownloadedByItsSidx() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/od"
        let boxes = try await Self.makeOnDemand(in: folder)
        let result = try await setup.download("od/manifest.mpd")
        #expect(result.status == 0, "\(result.stderr)")
        let id = try #require(result.output.split(separator: "\n").last.map { String($0) })
        let segments = try FileManager.default.contentsOfDirectory(atPath: setup.library + "/\(id)/video")
            .filter { $0.hasSuffix(".m4s") }
        #expect(segments.count == boxes.filter { $0.type == "moof" }.count, "\(segments)")
        let fromDisk = try await Self.videoFrames(setup.library + "/\(id)/manifest.mpd")
        let expected = try await Self.videoFrames(folder + "/v.mp4")
        #expect(fromDisk.count == 80 && fromDisk == expected, "\(fromDisk.count) frames, \(expected.count) expected")
        // Each byte of the file came once: the index, then each subsegment.
        let stats = try await setup.origin.settledStats()
        #expect(stats.duplicateBytes == 0, "the origin sent \(stats.duplicateBytes) bytes twice")
    }

    /// Killed with `kill -9` halfway, then run again: the package is whole, and no segment that
    /// was finished is fetched again.
    @Test func aKilledDownloadRunAgainFetchesNoFinishedSegmentAgain() async throws {
        // 30 KB/s per connection and 50 ms per response: the download takes several seconds.
        let setup = try await OfflineSetup(originArguments: ["--rate", "30K", "--latency", "50"])
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/dash"
        try await DASHThroughServeTests.make(.number, in: folder)
        let arguments = ["download", setup.origin.url("dash/manifest.mpd")]
        let (process, _, _) = try CLI.start(arguments, cacheDir: setup.workspace.cacheDirectory)
        let library = setup.library
        // Killed once two segments are in the package.
        let killed = try await onOwnThread { () -> Bool in
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, process.isRunning {
                let ids = (try? FileManager.default.contentsOfDirectory(atPath: library)) ?? []
                let done = ids.filter { $0.count == 16 }.flatMap { id in
                    ((try? FileManager.default.contentsOfDirectory(atPath: library + "/\(id)/video")) ?? [])
                        .filter { $0.hasSuffix(".m4s") }
                }
                if done.count >= 2 {
                    kill(process.processIdentifier, SIGKILL)
                    return true
                }
                usleep(10_000)
            }
            return false
        }
        try await onOwnThread { process.waitUntilExit() }
        try #require(killed, "the download ended before it could be killed")
        let before = try await setup.origin.settledStats()
        // The package's finished segments, by the origin path each came from (`video/00002.m4s`
        // is the muxer's `chunk-stream0-00002.m4s`, `audio-und/…` its `chunk-stream1-…`).
        let id = try #require(try FileManager.default.contentsOfDirectory(atPath: library).first { $0.count == 16 })
        var finished: Set<String> = []
        for (folderName, stream) in [("video", 0), ("audio-und", 1)] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: library + "/\(id)/\(folderName)")) ?? []
            for name in names where name.hasSuffix(".m4s") {
                finished.insert("/dash/chunk-stream\(stream)-\(name.dropLast(4)).m4s")
            }
        }
        #expect(finished.count >= 2, "\(finished)")
        let result = try await CLI.run(arguments, cacheDir: setup.workspace.cacheDirectory)
        #expect(result.status == 0, "\(result.stderr)")
        let after = try await setup.origin.settledStats()
        let again = after.requests.dropFirst(before.requests.count)
            .filter { finished.contains($0.path) && $0.status != 304 }
        #expect(again.isEmpty, "fetched again: \(again.map(\.path))")
        #expect(result.output.split(separator: "\n").last.map { String($0) } == id)
        let frames = try await Self.videoFrames(library + "/\(id)/manifest.mpd")
        #expect(frames.count == 80)
    }
}
