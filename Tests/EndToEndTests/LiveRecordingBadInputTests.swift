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
        // s0…s2 listed first, where the recording starts; s4 never comes.
        let origin = try await LiveOrigin(folder: folder, arguments: ["--window", "3", "--missing", segments[4]])
        let result = try await CLI.run(
            ["hls", "download", origin.url("vod.m3u8"), "--duration", "7s"],
            cacheDir: setup.workspace.cacheDirectory,
            timeout: .seconds(60)
        )
        #expect(result.status == 0, "\(result.stderr)")
        let id = try #require(result.output.split(separator: "\n").last.map { String($0) })
        let playlist = try LiveRecordingTests.playlist(of: id, in: setup)
        let recorded = LiveRecordingTests.sequences(playlist)
        #expect(!recorded.contains(4) && recorded.contains(5) && recorded.contains(3), "\(recorded)")
        let lines = playlist.split(separator: "\n").map { String($0) }
        let position = try #require(lines.firstIndex(of: segments[5]))
        #expect(lines[position - 2] == "#EXT-X-DISCONTINUITY", "\(playlist)")
        let asset = try #require(try await setup.assets().first { $0.id == id })
        #expect(asset.recording?.lostSegments == 1 && asset.recording?.ended == "duration")
        // Tried a bounded number of times, not once per reload for ever.
        let counts = try await origin.counts()
        #expect((1...3).contains(counts["/" + segments[4]] ?? 0), "\(counts)")
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
        _ = try await LiveOrigin.makeSegments(in: folder, count: 10)
        // A segment every 0.3 s: the stream reaches its EXT-X-ENDLIST in about 2 s.
        let origin = try await LiveOrigin(folder: folder, arguments: ["--event", "--period", "0.3"])
        let result = try await CLI.run(
            ["hls", "download", origin.url("vod.m3u8"), "--from-start"],
            cacheDir: setup.workspace.cacheDirectory,
            timeout: .seconds(60)
        )
        #expect(result.status == 0, "\(result.stderr)")
        let id = try #require(result.output.split(separator: "\n").last.map { String($0) })
        #expect(LiveRecordingTests.sequences(try LiveRecordingTests.playlist(of: id, in: setup)) == Array(0..<10))
        let asset = try #require(try await setup.assets().first)
        #expect(asset.recording?.ended == "endlist" && asset.recording?.lostSegments == 0)
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
        (["--until", LiveRecordingBadInputTests.anHourAgo()], "invalid --until"),
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

    /// `HH:MM` an hour ago, local time: passed today, and more than 12 hours away tomorrow.
    static func anHourAgo() -> String {
        let components = Calendar.current.dateComponents([.hour, .minute], from: Date().addingTimeInterval(-3600))
        return String(format: "%02d:%02d", components.hour ?? 0, components.minute ?? 0)
    }
}
