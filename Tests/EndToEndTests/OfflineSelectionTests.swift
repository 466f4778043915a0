import Foundation
import Testing

/// What `hls download` chooses, says and leaves on disk: variant by bitrate and size, audio and
/// subtitles by language, `--dry-run`, `--json`, the same id on a second run, `hls ls` and `hls rm`.
@Suite(.timeLimit(.minutes(5))) struct OfflineSelectionTests {
    @Test func variantsAreChosenByBitrateAndResolution() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.variants, in: setup.workspace.originDirectory)
        let master = try String(
            contentsOfFile: setup.workspace.originDirectory + "/variants/master.m3u8",
            encoding: .utf8
        )
        let bandwidths = master.split(separator: "\n").compactMap { line -> Int64? in
            guard line.hasPrefix("#EXT-X-STREAM-INF:"), let range = line.range(of: "BANDWIDTH=") else { return nil }
            return Int64(line[range.upperBound...].prefix { $0.isNumber })
        }
        let high = try #require(bandwidths.max())
        let low = try #require(bandwidths.min())
        #expect(high > low)
        let cases: [([String], Int64, String)] = [
            ([], high, "320x240"),
            (["--max-bitrate", String(high - 1)], low, "160x120"),
            (["--max-bitrate", String(high)], high, "320x240"),
            (["--min-bitrate", String(low + 1)], high, "320x240"),
            (["--min-bitrate", "1k"], low, "160x120"),
            (["--max-resolution", "200x200"], low, "160x120"),
            (["--max-resolution", "120p"], low, "160x120"),
            (["--max-resolution", "240P"], high, "320x240"),
        ]
        for (arguments, bandwidth, resolution) in cases {
            let result = try await setup.download("variants/master.m3u8", arguments + ["--dry-run", "--json"])
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            let events = try Self.events(result.output)
            #expect(events.count == 1 && events.first?["event"] as? String == "selection")
            let variant = events.first?["variant"] as? [String: Any]
            #expect(variant?["bandwidth"] as? Int64 == bandwidth, "\(arguments): \(result.output)")
            #expect(variant?["resolution"] as? String == resolution, "\(arguments)")
        }
        let none = try await setup.download("variants/master.m3u8", "--max-bitrate", "1000")
        #expect(none.status == 1)
        let lines = none.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(none.stderr)")
        // Bit rates as every command prints them (`hls inspect`, `hls ls`, the download's summary).
        #expect(none.stderr.contains("no variant matches") && none.stderr.contains("\(Self.bitrate(high)) 320x240"))
        #expect(none.stderr.contains("\(Self.bitrate(low)) 160x120"), "\(none.stderr)")
        let inspected = try await CLI.run(["hls", "inspect", setup.origin.url("variants/master.m3u8")], cacheDir: nil)
        #expect(inspected.output.contains(Self.bitrate(high)), "\(inspected.output)")
        // A dry run fetches playlists and the first bytes of a few segments (to learn their
        // sizes), and leaves nothing in the library.
        let requested = try await setup.origin.stats().requests
        #expect(
            requested.allSatisfy { $0.path.hasSuffix(".m3u8") || $0.bodyBytes <= 2 },
            "\(requested.map { "\($0.path) \($0.range ?? "") \($0.bodyBytes)" })"
        )
        #expect(try await setup.assets().isEmpty)
    }

    @Test func audioAndSubtitlesAreChosenByLanguage() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.multi, in: setup.workspace.originDirectory)
        let plain = try await setup.download("multi/master.m3u8", "--dry-run")
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.output.contains("audio: en  subtitles: none"), "\(plain.output)")

        let before = try await setup.origin.stats().requests.count
        let german = try await setup.download("multi/master.m3u8", "--audio", "de", "--subtitles", "all")
        #expect(german.status == 0, "\(german.stderr)")
        let asset = try #require(try await setup.assets().first)
        #expect(asset.audio == ["de"] && asset.subtitles.count == 1, "\(asset.audio) \(asset.subtitles)")
        let master = try String(contentsOfFile: asset.path, encoding: .utf8)
        let media = master.split(separator: "\n").filter { $0.hasPrefix("#EXT-X-MEDIA:") }
        #expect(media.count == 2, "\(master)")
        #expect(media.contains { $0.contains("LANGUAGE=\"de\"") && $0.contains("DEFAULT=YES") }, "\(master)")
        #expect(!master.contains("LANGUAGE=\"en\""), "\(master)")
        #expect(media.contains { $0.contains("TYPE=SUBTITLES") && $0.contains("URI=\"subtitles") })
        // Only the chosen renditions came from the origin.
        let paths = Set(try await setup.origin.stats().requests.dropFirst(before).map(\.path))
        #expect(!paths.contains("/multi/p10.ts") && paths.contains("/multi/p20.ts"), "\(paths.sorted())")

        let missing = try await setup.download("multi/master.m3u8", "--audio", "fr")
        #expect(missing.status == 1)
        #expect(missing.stderr == "streamcache: error: no audio in 'fr'; the variant has en, de\n", "\(missing.stderr)")
        let bad = try await setup.download("multi/master.m3u8", "--subtitles", "en fr")
        #expect(bad.status != 0 && bad.stderr.contains("invalid --subtitles"), "\(bad.stderr)")
    }

    @Test func jsonEventsAResumedRunAndTheLibraryCommands() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.variants, in: setup.workspace.originDirectory)
        let first = try await setup.download("variants/master.m3u8", "--json", "--audio", "all")
        #expect(first.status == 0, "\(first.stderr)")
        let events = try Self.events(first.output)
        #expect(events.first?["event"] as? String == "selection")
        #expect(events.last?["event"] as? String == "finished")
        // Every rendition says it is complete, as the text mode's "video: every file on disk".
        let completed = (events.last?["completed"] as? [String]) ?? []
        #expect(completed.contains("video") && completed.count >= 2, "\(completed)")
        #expect(events.contains { $0["event"] as? String == "completed" && $0["rendition"] as? String == "video" })
        let progress = events.filter { $0["event"] as? String == "progress" }
        #expect(progress.count >= 2)
        let fractions = progress.compactMap { $0["fraction"] as? Double }
        #expect(fractions == fractions.sorted() && fractions.last == 1, "\(fractions)")
        let loaded = progress.last?["loaded"] as? [[Double]]
        let expected = progress.last?["expected"] as? [Double]
        #expect(
            loaded?.count == 1 && loaded?.first == expected,
            "\(String(describing: loaded)) \(String(describing: expected))"
        )
        let id = try #require(events.last?["id"] as? String)
        let path = try #require(events.last?["path"] as? String)
        #expect(FileManager.default.fileExists(atPath: path))

        // The same URL and selection is the same asset, and nothing is fetched again.
        let before = try await setup.origin.stats().requests.count
        let again = try await setup.download("variants/master.m3u8", "--audio", "all")
        #expect(again.status == 0 && again.output.split(separator: "\n").last.map(String.init) == id)
        #expect(again.stderr.contains("already on disk"), "\(again.stderr)")
        let later = try await setup.origin.stats().requests.dropFirst(before).map(\.path)
        #expect(later == ["/variants/master.m3u8"], "\(later)")
        // Another selection is another asset.
        let other = try await setup.download("variants/master.m3u8", "--max-bitrate", "200k")
        #expect(other.status == 0)
        let otherID = try #require(other.output.split(separator: "\n").last.map(String.init))
        #expect(otherID != id)

        let assets = try await setup.assets()
        #expect(Set(assets.map(\.id)) == [id, otherID])
        let listed = try #require(assets.first { $0.id == id })
        #expect(listed.state == "complete" && listed.audio == ["en", "de"] && listed.subtitles.isEmpty)
        #expect(listed.variant?.resolution == "320x240" && listed.variant?.codecs?.hasPrefix("avc1") == true)
        #expect(
            listed.duration > 5.5 && listed.bytes > 100_000 && listed.url == setup.origin.url("variants/master.m3u8")
        )
        let text = try await CLI.run(["hls", "ls"], cacheDir: setup.workspace.cacheDirectory)
        #expect(text.output.contains("\(id)  complete  100%"), "\(text.output)")

        let unknown = try await CLI.run(["hls", "rm", "0123456789abcdef"], cacheDir: setup.workspace.cacheDirectory)
        #expect(unknown.status == 1 && unknown.stderr.contains("no asset 0123456789abcdef"), "\(unknown.stderr)")
        let removed = try await CLI.run(["hls", "rm", id], cacheDir: setup.workspace.cacheDirectory)
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: setup.library + "/" + id))
        #expect(try await setup.assets().map(\.id) == [otherID])
        let all = try await CLI.run(["hls", "rm", "--all"], cacheDir: setup.workspace.cacheDirectory)
        let left = try await setup.assets()
        #expect(all.status == 0 && left.isEmpty)
    }

    @Test func progressIsABarOnATerminalAndPlainLinesOtherwise() async throws {
        let setup = try await OfflineSetup(originArguments: ["--rate", "100K"])
        defer { setup.remove() }
        try await TestStreams.make(.ts, in: setup.workspace.originDirectory)
        // On a terminal (a pty): one line redrawn with percent, bytes and speed.
        let spawn = "import pty, sys; sys.exit(pty.spawn(sys.argv[1:]) >> 8)"
        let terminal = try await Tool.run(
            "python3",
            [
                "-c", spawn, "env", "STREAMCACHE_DIR=\(setup.workspace.cacheDirectory)",
                "STREAMCACHE_LIBRARY=\(setup.library)", CLI.binary,
            ]
                + ["hls", "download", setup.origin.url("ts/index.m3u8"), "--jobs", "1"]
        )
        #expect(terminal.status == 0, "\(terminal.output)")
        let redrawn = terminal.output.split(separator: "\r").filter { $0.hasPrefix("download ") }
        #expect(redrawn.count >= 2, "\(terminal.output)")
        #expect(redrawn.contains { $0.contains("%") && $0.contains("/s") }, "\(terminal.output)")
        // Elsewhere: plain lines on stderr, and the id alone on stdout.
        try FileManager.default.removeItem(atPath: setup.library)
        let plain = try await setup.download("ts/index.m3u8", "--jobs", "1")
        #expect(plain.status == 0)
        #expect(!plain.stderr.contains("\r"))
        #expect(plain.stderr.split(separator: "\n").contains { $0.hasPrefix("download ") && $0.contains("%") })
        #expect(plain.output.split(separator: "\n").count == 1)
    }

    /// The JSON objects of `--json` output, one per line.
    /// `1.43 Mbit/s`, `640 kbit/s`: how the tool writes a bit rate.
    static func bitrate(_ bits: Int64) -> String {
        bits >= 1_000_000
            ? String(format: "%.2f Mbit/s", Double(bits) / 1e6) : String(format: "%.0f kbit/s", Double(bits) / 1e3)
    }

    static func events(_ output: String) throws -> [[String: Any]] {
        try output.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }
}
