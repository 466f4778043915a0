import Foundation
import StreamCacheTesting
import Testing

/// `rm PLAYLIST` removes a stream: the playlist and what it lists that no other cached playlist
/// lists; `rm --prefix` removes by the start of the URL.
@Suite(.timeLimit(.minutes(3))) struct StreamRemovalTests {
    @Test func aPlaylistGoesWithWhatOnlyItListsAndAPrefixWithWhatStartsSo() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let files = ["a/s0.ts", "a/s1.ts", "b/s0.ts", "shared/x.ts"]
        for folder in ["a", "b", "shared"] {
            try FileManager.default.createDirectory(
                atPath: workspace.originDirectory + "/" + folder,
                withIntermediateDirectories: true
            )
        }
        for (index, name) in files.enumerated() {
            try workspace.write(TestData.bytes(count: 50_000, seed: 740 + UInt64(index)), as: name)
        }
        func playlist(_ segments: [String]) -> String {
            "#EXTM3U\n#EXT-X-TARGETDURATION:10\n" + segments.map { "#EXTINF:10.0,\n\($0)\n" }.joined()
                + "#EXT-X-ENDLIST\n"
        }
        try playlist(["s0.ts", "s1.ts", "../shared/x.ts"])
            .write(toFile: workspace.originDirectory + "/a/index.m3u8", atomically: true, encoding: .utf8)
        try playlist(["s0.ts", "../shared/x.ts"])
            .write(toFile: workspace.originDirectory + "/b/index.m3u8", atomically: true, encoding: .utf8)
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        for name in files + ["a/index.m3u8", "b/index.m3u8"] {
            let got = try await CLI.run(
                ["get", origin.url(name), "-o", "/dev/null"],
                cacheDir: workspace.cacheDirectory
            )
            #expect(got.status == 0, "\(got.stderr)")
        }
        func cached() async throws -> Set<String> {
            struct Listed: Decodable { let url: String }
            let listed = try await CLI.run(["ls", "--json"], cacheDir: workspace.cacheDirectory)
            let resources = try JSONDecoder().decode(ListingOf<Listed>.self, from: listed.stdout).resources
            return Set(resources.map { String($0.url.dropFirst(origin.url("").count)) })
        }
        #expect(try await cached().count == 6)

        let removed = try await CLI.run(["rm", origin.url("a/index.m3u8")], cacheDir: workspace.cacheDirectory)
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.output == "removed \(origin.url("a/index.m3u8")) and 2 file(s) it lists\n")
        #expect(try await cached() == ["b/index.m3u8", "b/s0.ts", "shared/x.ts"], "the other stream's files stay")

        let byPrefix = try await CLI.run(["rm", "--prefix", origin.url("b/")], cacheDir: workspace.cacheDirectory)
        #expect(
            byPrefix.status == 0 && byPrefix.output == "removed 2 resource(s)\n",
            "\(byPrefix.output)\(byPrefix.stderr)"
        )
        #expect(try await cached() == ["shared/x.ts"])

        for bad in [["rm", "--prefix", ""], ["rm", origin.url("x.ts"), "--all"], ["rm", "--prefix", "h", "--all"]] {
            let refused = try await CLI.run(bad, cacheDir: workspace.cacheDirectory)
            #expect(refused.status == 64, "\(bad): \(refused.status) \(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1)
        }
        #expect(try await cached() == ["shared/x.ts"])
    }

    /// A playlist may list any URL: `rm` of it removes what it lists on its own origin only, and
    /// nothing pinned.
    @Test func aPlaylistTakesNothingOfAnotherOriginNorAnythingPinned() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        for (index, name) in ["s0.ts", "kept.ts", "theirs.ts"].enumerated() {
            try workspace.write(TestData.bytes(count: 20_000, seed: 760 + UInt64(index)), as: name)
        }
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        // Another origin's file, named by another host for the same server.
        let theirs = origin.url("theirs.ts").replacingOccurrences(of: "127.0.0.1", with: "localhost")
        let playlist =
            "#EXTM3U\n#EXT-X-TARGETDURATION:10\n"
            + ["s0.ts", "kept.ts", theirs].map { "#EXTINF:10.0,\n\($0)\n" }.joined() + "#EXT-X-ENDLIST\n"
        try playlist.write(toFile: workspace.originDirectory + "/index.m3u8", atomically: true, encoding: .utf8)
        for url in [origin.url("s0.ts"), origin.url("kept.ts"), theirs, origin.url("index.m3u8")] {
            let got = try await CLI.run(["get", url, "-o", "/dev/null"], cacheDir: workspace.cacheDirectory)
            #expect(got.status == 0, "\(got.stderr)")
        }
        let pinned = try await CLI.run(["pin", origin.url("kept.ts")], cacheDir: workspace.cacheDirectory)
        #expect(pinned.status == 0, "\(pinned.stderr)")

        let removed = try await CLI.run(["rm", origin.url("index.m3u8")], cacheDir: workspace.cacheDirectory)
        #expect(removed.output == "removed \(origin.url("index.m3u8")) and 1 file(s) it lists\n", "\(removed.stderr)")
        struct Listed: Decodable { let url: String }
        let listed = try await CLI.run(["ls", "--json"], cacheDir: workspace.cacheDirectory)
        let left = try JSONDecoder().decode(ListingOf<Listed>.self, from: listed.stdout).resources.map(\.url)
        #expect(Set(left) == [origin.url("kept.ts"), theirs])
    }
}
