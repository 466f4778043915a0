import Foundation
import StreamCacheTesting
import Testing

/// `hls download` of a live playlist records it, against a live origin written in Python
/// (`live_origin.py`): a package that plays frame for frame as the origin's segments, each fetched
/// once; where it starts; a kill and a rerun that marks what was lost and takes nothing twice;
/// the recording played through `serve` while it grows.
@Suite(.timeLimit(.minutes(3))) struct LiveRecordingTests {
    /// The package's segments as origin media sequence numbers (`s12.ts` is 12), in order.
    static func sequences(_ playlist: String) -> [Int] {
        playlist.split(separator: "\n").filter { $0.hasSuffix(".ts") }.compactMap {
            Int($0.dropFirst().prefix { $0 != "." })
        }
    }

    /// The asset id once the recording `process` into `library` lists `count` segments (30 s at
    /// most); watched on a thread of its own, so a busy test pool cannot make it late.
    static func listed(_ count: Int, in library: String, by process: ChildProcess) async throws -> String? {
        try await onOwnThread { () -> String? in
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, process.isRunning {
                let ids = (try? FileManager.default.contentsOfDirectory(atPath: library)) ?? []
                if let id = ids.first(where: { $0.count == 16 }),
                    let text = try? String(contentsOfFile: library + "/\(id)/video/index.m3u8", encoding: .utf8),
                    sequences(text).count >= count
                {
                    return id
                }
                usleep(20_000)
            }
            return nil
        }
    }

    static func playlist(of id: String, in setup: OfflineSetup) throws -> String {
        try String(contentsOfFile: setup.library + "/\(id)/video/index.m3u8", encoding: .utf8)
    }

    /// Records `url` for `duration` (`20s`) to its end: the asset id and its video playlist.
    static func record(_ url: String, for duration: String, in setup: OfflineSetup) async throws -> (String, String) {
        let result = try await CLI.run(
            ["hls", "download", url, "--duration", duration],
            cacheDir: setup.workspace.cacheDirectory,
            timeout: .seconds(60)
        )
        #expect(result.status == 0, "\(result.stderr)")
        let id = try #require(result.output.split(separator: "\n").last.map { String($0) })
        return (id, try playlist(of: id, in: setup))
    }

    @Test func aRecordingForADurationPlaysAsTheOriginsSegmentsAndFetchesEachOnce() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/live"
        let segments = try await LiveOrigin.makeSegments(in: folder, count: 40)
        let origin = try await LiveOrigin(folder: folder, arguments: ["--window", "4"])

        let (id, playlist) = try await Self.record(origin.url("vod.m3u8"), for: "20s", in: setup)
        #expect(playlist.contains("#EXT-X-PLAYLIST-TYPE:VOD") && playlist.contains("#EXT-X-ENDLIST"))
        let recorded = Self.sequences(playlist)
        #expect(recorded.count >= 20, "\(playlist)")
        #expect(recorded == Array((recorded.first ?? 0)..<(recorded.first ?? 0) + recorded.count), "\(playlist)")

        // The same segments as the origin has them, as a VOD playlist of its own files.
        var reference = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-PLAYLIST-TYPE:VOD\n"
        for sequence in recorded { reference += "#EXTINF:1.0,\n\(segments[sequence])\n" }
        try (reference + "#EXT-X-ENDLIST\n").write(
            toFile: folder + "/reference.m3u8",
            atomically: true,
            encoding: .utf8
        )
        let played = try await TestStreams.frames(setup.library + "/\(id)/master.m3u8")
        let expected = try await TestStreams.frames(folder + "/reference.m3u8")
        #expect(!played.isEmpty && played == expected, "\(played.count) frames played, \(expected.count) expected")

        let counts = try await origin.counts()
        for sequence in recorded {
            #expect(
                counts["/" + segments[sequence]] == 1,
                "\(segments[sequence]) was requested \(counts["/" + segments[sequence]] ?? 0) times"
            )
        }
        #expect(counts.filter { $0.key.hasSuffix(".ts") }.values.allSatisfy { $0 == 1 }, "\(counts)")
    }

    /// An origin that recycles segment names (`r0.ts`, `r1.ts`, `r2.ts` for ever newer segments)
    /// under `max-age` without a validator: each segment recorded is the one listed, never an
    /// older one cached under its name.
    @Test func recycledSegmentNamesRecordTheNewerSegments() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/live"
        let segments = try await LiveOrigin.makeSegments(in: folder, count: 40)
        let origin = try await LiveOrigin(folder: folder, arguments: ["--window", "3", "--repeat-uris", "3"])
        let (id, playlist) = try await Self.record(origin.url("vod.m3u8"), for: "8s", in: setup)
        let files = playlist.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }
        let originals = segments.map { FileManager.default.contents(atPath: folder + "/" + $0) }
        let recorded = files.map { file in
            originals.firstIndex(of: FileManager.default.contents(atPath: setup.library + "/\(id)/video/\(file)"))
        }
        #expect(recorded.count >= 6, "\(playlist)")
        let first = recorded.first.flatMap { $0 } ?? -1
        if recorded != Array(first..<first + recorded.count).map({ Optional($0) }) {
            let log = try await origin.requestLog()
            Issue.record("files \(files) hold segments \(recorded); the origin was asked:\n\(log)")
        }
    }

    @Test func fromStartTakesTheFirstSegmentListedAndTheLiveEdgeIsTheDefault() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/live"
        _ = try await LiveOrigin.makeSegments(in: folder, count: 12)
        // Lists that hold still (a segment an hour): each recording reaches its 2 s in what it
        // takes at the start, however late it starts.
        let event = try await LiveOrigin(folder: folder, arguments: ["--event", "--start", "6", "--period", "3600"])
        let window = try await LiveOrigin(
            folder: folder,
            arguments: ["--window", "6", "--start", "8", "--period", "3600"]
        )

        func firstRecorded(_ url: String, _ arguments: [String]) async throws -> [Int] {
            let result = try await CLI.run(
                ["hls", "download", url, "--duration", "2s"] + arguments,
                cacheDir: setup.workspace.cacheDirectory,
                timeout: .seconds(60)
            )
            #expect(result.status == 0, "\(result.stderr)")
            let id = try #require(result.output.split(separator: "\n").last.map { String($0) })
            let playlist = try Self.playlist(of: id, in: setup)
            try FileManager.default.removeItem(atPath: setup.library + "/" + id)
            return Self.sequences(playlist)
        }
        // An EVENT playlist's first segment; the oldest of a sliding window (s2 of s2…s7).
        let fromTheFirst = try await firstRecorded(event.url("vod.m3u8"), ["--from-start"])
        #expect(fromTheFirst == Array(0..<6))
        let fromTheOldest = try await firstRecorded(window.url("vod.m3u8"), ["--from-start"])
        #expect(fromTheOldest == Array(2..<8))
        // By default, the live edge: the last three target durations (s5…s7).
        let fromTheEdge = try await firstRecorded(window.url("vod.m3u8"), [])
        #expect(fromTheEdge == Array(5..<8))
    }

    @Test func aKilledRecordingRunAgainMarksWhatItLostAndTakesNothingTwice() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/live"
        let segments = try await LiveOrigin.makeSegments(in: folder, count: 40)
        let origin = try await LiveOrigin(folder: folder, arguments: ["--window", "3"])
        let arguments = ["hls", "download", origin.url("vod.m3u8")]

        let (process, output, _) = try CLI.start(arguments, cacheDir: setup.workspace.cacheDirectory)
        // Killed once the package lists three segments.
        let listed = try await Self.listed(3, in: setup.library, by: process)
        if listed != nil { kill(process.processIdentifier, SIGKILL) }
        try await onOwnThread { process.waitUntilExit() }
        _ = output
        let id = try #require(listed, "the recording listed no three segments")
        let before = Self.sequences(try Self.playlist(of: id, in: setup))
        // The window (3 s) moves past what the killed run would have taken next.
        try await Task.sleep(for: .seconds(5))

        let result = try await CLI.run(
            arguments + ["--duration", "\(before.count + 4)s"],
            cacheDir: setup.workspace.cacheDirectory,
            timeout: .seconds(60)
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.output.split(separator: "\n").last.map { String($0) } == id, "a rerun records the same asset")
        let playlist = try Self.playlist(of: id, in: setup)
        let after = Self.sequences(playlist)
        #expect(Array(after.prefix(before.count)) == before, "what was listed stays listed")
        #expect(Set(after).count == after.count && after == after.sorted(), "a segment twice: \(after)")
        // The hole is marked where it is, never joined as if continuous.
        let lines = playlist.split(separator: "\n").map(String.init)
        let firstAfterHole = try #require(zip(after, after.dropFirst()).first { $1 != $0 + 1 }?.1, "no hole: \(after)")
        let position = try #require(lines.firstIndex(of: segments[firstAfterHole]))
        #expect(lines[position - 2] == "#EXT-X-DISCONTINUITY", "\(playlist)")
        let asset = try #require(try await setup.assets().first { $0.id == id })
        #expect((asset.recording?.lostSegments ?? 0) >= 1, "\(String(describing: asset.recording))")
        let counts = try await origin.counts()
        #expect(counts.filter { $0.key.hasSuffix(".ts") }.values.allSatisfy { $0 == 1 }, "\(counts)")
        // And it plays: ffmpeg reads every listed segment.
        let played = try await TestStreams.frames(setup.library + "/\(id)/master.m3u8")
        #expect(played.count >= after.count * 10 - 10, "\(played.count) frames for \(after.count) segments")
    }

    @Test func aRecordingPlaysThroughServeWhileItGrows() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/live"
        _ = try await LiveOrigin.makeSegments(in: folder, count: 40)
        let origin = try await LiveOrigin(folder: folder, arguments: ["--window", "3"])
        let proxy = try await ListeningProcess(["serve"], cacheDir: setup.workspace.cacheDirectory)
        let (process, output, errors) = try CLI.start(
            ["hls", "download", origin.url("vod.m3u8"), "--json"],
            cacheDir: setup.workspace.cacheDirectory
        )
        let selection = try await output.firstLine()
        let id = try #require(
            (try? JSONSerialization.jsonObject(with: Data(selection.utf8)) as? [String: Any])?["id"] as? String,
            "\(selection)"
        )
        let url = proxy.url("offline/\(id)/master.m3u8")
        try await Task.sleep(for: .seconds(2))

        /// The time of the live edge ffprobe sees: the first packet of the last segment listed.
        func edge() async throws -> Double {
            let probe = try await Tool.run(
                "ffprobe",
                [
                    "-v", "error", "-live_start_index", "-1", "-read_intervals", "%+#1", "-show_entries",
                    "packet=pts_time", "-of", "csv=p=0", url,
                ]
            )
            // `5.400000,`: one packet, its time.
            let line = probe.output.split(separator: "\n").first.map { $0.filter { $0 != "," } } ?? ""
            return Double(line) ?? -1
        }
        let first = try await edge()
        // ffmpeg plays it from its first segment, following it as it grows.
        let played = setup.workspace.output("played.ts")
        let player = Task {
            try await Tool.run(
                "ffmpeg",
                [
                    "-hide_banner", "-v", "error", "-live_start_index", "0", "-i", url, "-c", "copy", "-f", "mpegts",
                    played,
                ],
                timeout: .seconds(90)
            )
        }
        try await Task.sleep(for: .seconds(3))
        let later = try await edge()
        #expect(first >= 0 && later > first + 1.5, "the recording's edge went from \(first) s to \(later) s")

        kill(process.processIdentifier, SIGINT)
        try await onOwnThread { process.waitUntilExit() }
        let stderr = try await errors.text()
        #expect(process.terminationStatus == 0, "\(stderr)")
        let playlist = try Self.playlist(of: id, in: setup)
        #expect(playlist.contains("#EXT-X-ENDLIST"))
        let result = try await player.value
        #expect(result.status == 0, "\(result.stderr)")
        let size = (try? FileManager.default.attributesOfItem(atPath: played)[.size] as? Int) ?? 0
        #expect(size > 0, "ffmpeg wrote nothing: \(result.stderr)")
        // Every frame of the package, in order, from the first (their hashes: a remux moves the times).
        let decoded = try await Tool.run(
            "ffmpeg",
            ["-hide_banner", "-v", "error", "-i", played, "-f", "framemd5", "-"]
        )
        let fromServe = decoded.output.split(separator: "\n").filter { !$0.hasPrefix("#") }.map {
            $0.split(separator: ",").last
        }
        let fromDisk = try await TestStreams.frames(setup.library + "/\(id)/master.m3u8").map {
            $0.split(separator: ",").last
        }
        #expect(!fromDisk.isEmpty && fromServe == fromDisk, "served \(fromServe.count) frames of \(fromDisk.count)")
    }

    /// `origin --live` serves a multivariant stream's renditions live; a recording of the video
    /// and both audio languages keeps them aligned: the same media sequence numbers in each.
    @Test func renditionsRecordedFromTheTestOriginCoverTheSameSegments() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        // Two minutes: the live stream runs on the origin's clock, and a busy test run took over
        // 30 s to record 5 s, by when a 30 s stream had ended after two segments.
        try await TestStreams.make(.variants, in: workspace.originDirectory, seconds: 120)
        let origin = try await OriginProcess(
            directory: workspace.originDirectory,
            arguments: ["--live", "--window", "3"]
        )
        let result = try await CLI.run(
            ["hls", "download", origin.url("variants/master.m3u8"), "--audio", "all", "--duration", "5s"],
            cacheDir: workspace.cacheDirectory,
            timeout: .seconds(60)
        )
        #expect(result.status == 0, "\(result.stderr)")
        let id = try #require(result.output.split(separator: "\n").last.map { String($0) })
        let package = workspace.cacheDirectory + "/packages/" + id
        let folders = try FileManager.default.contentsOfDirectory(atPath: package).filter { !$0.contains(".") }.sorted()
        #expect(folders == ["audio-de", "audio-en", "video"], "\(folders)")
        let numbered = try folders.map { folder in
            try String(contentsOfFile: package + "/\(folder)/index.m3u8", encoding: .utf8)
                .split(separator: "\n").filter { $0.hasPrefix("s") && $0.hasSuffix(".ts") }
                .map { String($0) }
        }
        #expect(numbered[0].count >= 3 && numbered.allSatisfy { $0 == numbered[0] }, "\(numbered): \(result.stderr)")
        let frames = try await TestStreams.frames(package + "/master.m3u8")
        #expect(!frames.isEmpty)
        // Each segment once (a live playlist is fetched again as it changes).
        let segments = try await origin.settledStats().requests.filter { $0.path.hasSuffix(".ts") }
        let paths = segments.map(\.path)
        #expect(Set(paths).count == paths.count, "\(paths.sorted())")
    }
}
