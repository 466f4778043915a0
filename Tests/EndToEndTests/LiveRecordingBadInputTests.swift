import Foundation
import StreamCacheTesting
import Testing

/// What a recording does with a live origin that misbehaves and with options that cannot be
/// met: it ends with the package finished and playable, or refuses in one line before it starts.
@Suite(.timeLimit(.minutes(3))) struct LiveRecordingBadInputTests {
    @Test func aSegmentThatStays404IsLostAndMarkedAndTheRecordingGoesOn() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/live"
        let segments = try await LiveOrigin.makeSegments(in: folder, count: 30)
        // A window of 8 one-second segments, however late the recording starts; s12 never comes.
        let origin = try await LiveOrigin(folder: folder, arguments: ["--window", "8", "--missing", segments[12]])
        let result = try await CLI.run(
            ["hls", "download", origin.url("vod.m3u8"), "--from-start", "--duration", "16s"],
            cacheDir: setup.workspace.cacheDirectory,
            timeout: .seconds(60)
        )
        #expect(result.status == 0, "\(result.stderr)")
        let id = try #require(result.output.split(separator: "\n").last.map { String($0) })
        let playlist = try LiveRecordingTests.playlist(of: id, in: setup)
        let recorded = LiveRecordingTests.sequences(playlist)
        #expect(!recorded.contains(12) && recorded.contains(11) && recorded.contains(13), "\(recorded)")
        let lines = playlist.split(separator: "\n").map { String($0) }
        let position = try #require(lines.firstIndex(of: segments[13]))
        #expect(lines[position - 2] == "#EXT-X-DISCONTINUITY", "\(playlist)")
        let asset = try #require(try await setup.assets().first { $0.id == id })
        #expect(asset.recording?.lostSegments == 1 && asset.recording?.ended == "duration")
        // Tried a bounded number of times, not once per reload for ever.
        let counts = try await origin.counts()
        #expect((1...3).contains(counts["/" + segments[12]] ?? 0), "\(counts)")
    }

    @Test func aPlaylistThatNeverAdvancesEndsTheRecordingWithWhatItHas() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/live"
        _ = try await LiveOrigin.makeSegments(in: folder, count: 30)
        // One new segment an hour: the playlist stays as it is.
        let origin = try await LiveOrigin(folder: folder, arguments: ["--window", "3", "--period", "3600"])
        let started = ContinuousClock.now
        let result = try await CLI.run(
            ["hls", "download", origin.url("vod.m3u8")],
            cacheDir: setup.workspace.cacheDirectory,
            timeout: .seconds(90)
        )
        #expect(result.status == 1)
        #expect(result.stderr.contains("has not advanced for"), "\(result.stderr)")
        #expect(started.duration(to: .now) < .seconds(40))
        // Reloads are paced (half a target duration while unchanged), not a busy loop: about 30
        // in 15 s, each of two requests (this origin gives no validator, so a reload's check
        // fetches the playlist and its read fetches it again).
        let reloads = try await origin.counts()["/vod.m3u8"] ?? 0
        #expect(reloads <= 80, "\(reloads) requests for the playlist")
        let asset = try #require(try await setup.assets().first)
        #expect(asset.state == "complete" && asset.duration == 3, "\(asset.state) \(asset.duration)")
        let playlist = try LiveRecordingTests.playlist(of: asset.id, in: setup)
        #expect(playlist.contains("#EXT-X-ENDLIST"))
    }

    @Test func aStreamThatEndsEndsTheRecordingAsVOD() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/live"
        _ = try await LiveOrigin.makeSegments(in: folder, count: 20)
        // Three segments at first, then one every 0.5 s: the stream reaches its EXT-X-ENDLIST
        // 8.5 s after the origin starts, while the recording runs.
        let origin = try await LiveOrigin(folder: folder, arguments: ["--event", "--period", "0.5"])
        let result = try await CLI.run(
            ["hls", "download", origin.url("vod.m3u8"), "--from-start"],
            cacheDir: setup.workspace.cacheDirectory,
            timeout: .seconds(60)
        )
        #expect(result.status == 0, "\(result.stderr)")
        let id = try #require(result.output.split(separator: "\n").last.map { String($0) })
        #expect(LiveRecordingTests.sequences(try LiveRecordingTests.playlist(of: id, in: setup)) == Array(0..<20))
        let asset = try #require(try await setup.assets().first)
        #expect(
            asset.recording?.ended == "endlist" && asset.recording?.lostSegments == 0,
            "\(String(describing: asset.recording))"
        )
    }

    @Test func aSecondRecordingOfTheSameStreamSaysTheFirstRuns() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/live"
        _ = try await LiveOrigin.makeSegments(in: folder, count: 30)
        let origin = try await LiveOrigin(folder: folder, arguments: ["--window", "3"])
        let arguments = ["hls", "download", origin.url("vod.m3u8")]
        let (first, output, _) = try CLI.start(arguments, cacheDir: setup.workspace.cacheDirectory)
        defer { if first.isRunning { first.terminate() } }
        _ = output
        try await Task.sleep(for: .seconds(2))
        let second = try await CLI.run(arguments, cacheDir: setup.workspace.cacheDirectory, timeout: .seconds(30))
        #expect(second.status == 1)
        #expect(second.stderr.contains("is being recorded by another process"), "\(second.stderr)")
        #expect(first.isRunning, "the second recording stopped the first")
    }

    @Test(arguments: [
        (["--duration", "0"], "invalid --duration"),
        (["--duration", "soon"], "invalid --duration"),
        (["--until", "25:00"], "invalid --until"),
        (["--until", LiveRecordingBadInputTests.aTimePassedToday()], "invalid --until"),
    ])
    func optionsThatCannotBeMetAreRefusedInOneLine(arguments: [String], message: String) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let result = try await CLI.run(
            ["hls", "download", "http://127.0.0.1:9/live.m3u8"] + arguments,
            cacheDir: workspace.cacheDirectory
        )
        #expect(result.status == 64)
        #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains(message), "\(result.stderr)")
    }

    /// `HH:MM:SS` local time an hour ago, or today's midnight when that was yesterday: a time
    /// that has passed today and is more than 12 hours away tomorrow, whenever the test runs.
    static func aTimePassedToday() -> String {
        let now = Date()
        let passed = max(Calendar.current.startOfDay(for: now), now.addingTimeInterval(-3600))
        let components = Calendar.current.dateComponents([.hour, .minute, .second], from: passed)
        return String(format: "%02d:%02d:%02d", components.hour ?? 0, components.minute ?? 0, components.second ?? 0)
    }
}

/// A recording whose disk fills, and one whose playlist disappears: each ends with the package
/// finished as VOD and playable, and exits 1 naming the cause.
@Suite(.timeLimit(.minutes(3))) struct LiveRecordingEndingTests {
    @Test(.enabled(if: Tmpfs.canMount, "mounting a tmpfs needs root"))
    func aDiskThatFillsEndsTheRecordingWithAPlayablePackage() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let disk = try Tmpfs(megabytes: 24)
        defer { disk.unmount() }
        let folder = workspace.originDirectory + "/live"
        _ = try await LiveOrigin.makeSegments(in: folder, count: 60)
        let origin = try await LiveOrigin(folder: folder, arguments: ["--window", "3", "--period", "0.5"])
        let (process, output, errors) = try CLI.start(["hls", "download", origin.url("vod.m3u8")], cacheDir: disk.path)
        _ = output
        let library = disk.path + "/packages"
        // Once three segments are listed, something else takes all but 300 KB of the disk.
        let id = try await LiveRecordingTests.listed(3, in: library, by: process)
        let asset = try #require(id, "the recording listed no three segments")
        let filler = Int(disk.freeBytes) - 300_000
        _ = FileManager.default.createFile(atPath: disk.path + "/filler", contents: Data(count: max(0, filler)))
        try await onOwnThread { process.waitUntilExit() }
        let stderr = try await errors.text()
        #expect(process.terminationStatus == 1, "\(stderr)")
        #expect(stderr.contains("the recording ends with"), "\(stderr)")
        let playlist = try String(contentsOfFile: library + "/\(asset)/video/index.m3u8", encoding: .utf8)
        try #require(playlist.contains("#EXT-X-ENDLIST"), "\(playlist)")
        #expect(!FileManager.default.fileExists(atPath: library + "/\(asset)/.reserve"))
        let played = try await TestStreams.frames(library + "/\(asset)/master.m3u8")
        #expect(played.count >= LiveRecordingTests.sequences(playlist).count * 10 - 10)
    }

    /// A playlist that comes one byte every 5 s (never idle long enough for a read to time out)
    /// holds the recording past neither its `--until` nor the first signal.
    @Test(arguments: [false, true])
    func aTricklingReloadHoldsTheRecordingPastNoStop(bySignal: Bool) async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/live"
        _ = try await LiveOrigin.makeSegments(in: folder, count: 30)
        // Room for a slow start on a busy machine: its first reloads come whole.
        let origin = try await LiveOrigin(folder: folder, arguments: ["--window", "3", "--trickle-after", "5"])
        let until = Calendar.current.dateComponents([.hour, .minute, .second], from: Date().addingTimeInterval(12))
        let time = String(format: "%02d:%02d:%02d", until.hour ?? 0, until.minute ?? 0, until.second ?? 0)
        let (process, output, errors) = try CLI.start(
            ["hls", "download", origin.url("vod.m3u8")] + (bySignal ? [] : ["--until", time]),
            cacheDir: setup.workspace.cacheDirectory
        )
        _ = output
        _ = try #require(try await LiveRecordingTests.listed(3, in: setup.library, by: process))
        // By now a reload trickles, for 5 s a byte (a reload's own limit is 15 s).
        try await Task.sleep(for: .seconds(6))
        let started = ContinuousClock.now
        if bySignal { kill(process.processIdentifier, SIGTERM) }
        try await onOwnThread { process.waitUntilExit() }
        let stderr = try await errors.text()
        #expect(process.terminationStatus == 0, "\(stderr)")
        #expect(started.duration(to: .now) < .seconds(bySignal ? 4 : 9), "\(stderr)")
        let asset = try #require(try await setup.assets().first)
        #expect(asset.state == "complete" && asset.duration >= 3)
    }

    @Test func aPlaylistThatDisappearsEndsTheRecordingWithWhatItHas() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/live"
        _ = try await LiveOrigin.makeSegments(in: folder, count: 30)
        let origin = try await LiveOrigin(folder: folder, arguments: ["--window", "3"])
        let (process, output, errors) = try CLI.start(
            ["hls", "download", origin.url("vod.m3u8")],
            cacheDir: setup.workspace.cacheDirectory
        )
        _ = output
        _ = try #require(try await LiveRecordingTests.listed(3, in: setup.library, by: process))
        try FileManager.default.removeItem(atPath: folder + "/vod.m3u8")
        let started = ContinuousClock.now
        try await onOwnThread { process.waitUntilExit() }
        let stderr = try await errors.text()
        #expect(process.terminationStatus == 1)
        #expect(stderr.contains("404") && stderr.contains("the recording ends with"), "\(stderr)")
        // Five reloads a second, two, four and eight seconds apart: bounded, with a backoff.
        #expect(started.duration(to: .now) < .seconds(40))
        let reloads = try await origin.counts()["/vod.m3u8"] ?? 0
        #expect(reloads < 30, "\(reloads) requests for the playlist")
        let asset = try #require(try await setup.assets().first)
        #expect(asset.state == "complete" && asset.duration >= 3)
    }
}
