import Foundation
import StreamCacheTesting
import Testing

/// A live playlist through `serve` stayed as it was first fetched for up to 60 s, so a live
/// stream stalled. ffmpeg plays a playlist that grows while it plays, then ends.
@Suite(.timeLimit(.minutes(3))) struct LivePlaylistTests {
    @Test func ffmpegPlaysAGrowingLivePlaylistToItsEnd() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/live"
        // Eight 1 s segments, made as a VOD stream; the live playlist lists them over time.
        let segments = try await LiveOrigin.makeSegments(in: folder, count: 8)
        #expect(segments.count >= 6)
        func publish(_ count: Int, ended: Bool) throws {
            var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:0\n"
            for segment in segments.prefix(count) { text += "#EXTINF:1.000000,\n\(segment)\n" }
            if ended { text += "#EXT-X-ENDLIST\n" }
            try text.write(toFile: folder + "/live.m3u8", atomically: true, encoding: .utf8)
        }
        try publish(2, ended: false)
        let output = setup.workspace.output("played.ts")
        let player = Task {
            try await Tool.run(
                "ffmpeg",
                [
                    "-hide_banner", "-v", "error", "-live_start_index", "0", "-i", setup.url("live/live.m3u8"),
                    "-c", "copy", "-f", "mpegts", output,
                ],
                timeout: .seconds(90)
            )
        }
        for count in 3...segments.count {
            try await Task.sleep(for: .seconds(1))
            try publish(count, ended: count == segments.count)
            // What a player reloading now gets: the list as the origin has it, never an old one.
            let reloaded = String(decoding: try await Curl.fetch(setup.url("live/live.m3u8")).body, as: UTF8.self)
            #expect(reloaded.contains(segments[count - 1]), "a stale playlist after \(count) segments")
        }
        let ended = ContinuousClock.now
        let played = try await player.value
        // A stale playlist stalled the player until the cache revalidated (60 s).
        #expect(ended.duration(to: .now) < .seconds(30), "the player stalled after the stream ended")
        #expect(played.status == 0, "\(played.stderr)")
        let probe = try await Tool.run(
            "ffprobe",
            ["-v", "error", "-show_entries", "format=duration", "-of", "default=nw=1:nk=1", output]
        )
        let seconds = Double(probe.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(seconds > Double(segments.count) - 1.5, "ffmpeg played \(seconds) s of \(segments.count)")
    }
}
