import Foundation
import StreamCacheTesting
import Testing

/// Long downloads said nothing, a silent origin gave 91 s of silence, and `ls` had no summary,
/// no filter and listed every HLS segment.
@Suite(.timeLimit(.minutes(2))) struct ProgressAndListingTests {
    @Test func progressIsShownWhenAskedAndASilentOriginTimesOut() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        try workspace.write(TestData.bytes(count: 3_000_000, seed: 600), as: "a.bin")
        let origin = try await OriginProcess(directory: workspace.originDirectory, arguments: ["--rate", "1M"])
        let output = workspace.output("a.bin")
        let quiet = try await CLI.run(["get", origin.url("a.bin"), "-o", output], cacheDir: workspace.cacheDirectory)
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "progress without a terminal: \(quiet.stderr)")
        let shown = try await CLI.run(
            ["get", origin.url("a.bin"), "-o", output, "--progress", "--range", "0-"],
            cacheDir: TestData.temporaryDirectory("cache")
        )
        let lines = shown.stderr.split(separator: "\n")
        #expect(shown.status == 0)
        #expect(lines.first?.contains("waiting for 127.0.0.1:\(origin.port)") == true, "\(shown.stderr)")
        #expect(lines.contains { $0.contains("%") && $0.contains("/s") && $0.contains("left") }, "\(shown.stderr)")
        #expect(lines.last?.contains("done") == true, "\(shown.stderr)")

        // An origin that accepts connections and never answers.
        let silent = try RawSocket.listening()
        defer { close(silent.descriptor) }
        listen(silent.descriptor, 16)
        let start = ContinuousClock.now
        let timedOut = try await CLI.run(
            ["get", "http://127.0.0.1:\(silent.port)/a.mp3", "-o", output, "--timeout", "1"],
            cacheDir: workspace.cacheDirectory,
            timeout: .seconds(60)
        )
        #expect(timedOut.status != 0)
        #expect(timedOut.stderr.contains("timed out"), "\(timedOut.stderr)")
        #expect(timedOut.stderr.split(separator: "\n").count == 1)
        #expect(start.duration(to: .now) < .seconds(30), "--timeout 1 was not honoured")
    }

    @Test func lsSummarisesFiltersAndGroupsSegments() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/show"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        /// A media playlist `name` of `count` segments `PREFIX0.ts`… of `size` bytes each.
        func writePlaylist(_ name: String, segments prefix: String, count: Int, size: Int, seed: UInt64) throws {
            var playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n"
            for segment in 0..<count {
                try Data(TestData.bytes(count: size, seed: seed + UInt64(segment))).write(
                    to: URL(fileURLWithPath: "\(folder)/\(prefix)\(segment).ts")
                )
                playlist += "#EXTINF:2,\n\(prefix)\(segment).ts\n"
            }
            try (playlist + "#EXT-X-ENDLIST\n").write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
        }
        try writePlaylist("index.m3u8", segments: "s", count: 3, size: 1000, seed: 601)
        // Another variant's playlist in the same folder, with segments of its own.
        try writePlaylist("other.m3u8", segments: "o", count: 2, size: 500, seed: 611)
        try setup.workspace.write(TestData.bytes(count: 5000, seed: 604), as: "ep.mp3")
        for path in [
            "show/index.m3u8", "show/s0.ts", "show/s1.ts", "show/s2.ts", "show/other.m3u8", "show/o0.ts", "show/o1.ts",
            "ep.mp3",
        ] {
            #expect(try await Curl.fetch(setup.url(path)).status == 200, "\(path)")
        }
        let cache = setup.workspace.cacheDirectory
        let text = try await CLI.run(["ls"], cacheDir: cache).output
        let lines = text.split(separator: "\n")
        #expect(lines.first?.hasPrefix("8 resource(s) (8 complete, 0 pinned)") == true, "\(text)")
        // Each playlist counts the segments it lists.
        func segmentsLine(after playlist: String) -> String? {
            guard let at = lines.firstIndex(where: { $0.hasSuffix(playlist) }), at + 2 < lines.count else { return nil }
            return String(lines[at + 2])
        }
        #expect(segmentsLine(after: "show/index.m3u8")?.contains("+ 3 segment(s), 2.9 KiB cached") == true, "\(text)")
        #expect(segmentsLine(after: "show/other.m3u8")?.contains("+ 2 segment(s), 1000 B cached") == true, "\(text)")
        #expect(!text.contains("s1.ts"), "segments listed one by one: \(text)")
        let all = try await CLI.run(["ls", "--segments"], cacheDir: cache).output
        #expect(all.contains("s1.ts"))
        let filtered = try await CLI.run(["ls", setup.origin.url("ep")], cacheDir: cache).output
        #expect(filtered.contains("ep.mp3") && !filtered.contains("index.m3u8"), "\(filtered)")
        #expect(filtered.hasPrefix("1 resource(s)"))
    }
}
