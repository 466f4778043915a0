import Foundation
import StreamCacheTesting
import Testing

/// Bad input gets one clear line on stderr, a non-zero exit, and no output file.
@Suite(.timeLimit(.minutes(5))) struct BadInputTests {
    private func expectCleanFailure(
        _ arguments: [String],
        cacheDir: String,
        mentions: String,
        output: String? = nil
    ) async throws {
        let result = try await CLI.run(arguments, cacheDir: cacheDir)
        #expect(result.status != 0, "\(arguments) succeeded")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(arguments): \(result.stderr)")
        #expect(result.stderr.lowercased().contains(mentions.lowercased()), "\(arguments): \(result.stderr)")
        #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Backtrac"))
        if let output { #expect(!FileManager.default.fileExists(atPath: output)) }
    }

    @Test func rejectsWhatItCannotFetch() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        try workspace.write(TestData.bytes(count: 1000, seed: 50), as: "a.mp3")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let output = workspace.output("x")
        let cache = workspace.cacheDirectory
        try await expectCleanFailure(
            ["get", "file:///etc/passwd", "-o", output],
            cacheDir: cache,
            mentions: "scheme",
            output: output
        )
        try await expectCleanFailure(["get", "ftp://example.com/a.mp3"], cacheDir: cache, mentions: "scheme")
        try await expectCleanFailure(["get", "not a url"], cacheDir: cache, mentions: "url")
        for range in ["5-1", "abc", "-0", "1-2-3", "99999999999999999999-"] {
            try await expectCleanFailure(
                ["get", origin.url("a.mp3"), "--range", range, "-o", output],
                cacheDir: cache,
                mentions: "range",
                output: output
            )
        }
        try await expectCleanFailure(
            ["get", origin.url("a.mp3"), "--range", "5000-6000", "-o", output],
            cacheDir: cache,
            mentions: "past the end",
            output: output
        )
        try await expectCleanFailure(
            ["get", origin.url("missing.mp3"), "-o", output],
            cacheDir: cache,
            mentions: "404",
            output: output
        )
        try await expectCleanFailure(
            ["get", origin.url("a.mp3"), "--header", "Bad\r\nInjected: yes"],
            cacheDir: cache,
            mentions: "header"
        )

        // An origin that is not there: a port that refuses connections.
        let refusing = try RefusingPort()
        try await expectCleanFailure(
            ["get", refusing.url("a.mp3"), "-o", output],
            cacheDir: cache,
            mentions: "connect",
            output: output
        )
    }

    @Test func reportsAnUnusableCacheDirectory() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        try workspace.write(TestData.bytes(count: 1000, seed: 51), as: "a.mp3")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let blocker = workspace.outputDirectory + "/file-not-dir"
        _ = FileManager.default.createFile(atPath: blocker, contents: Data("x".utf8))
        try await expectCleanFailure(
            ["get", origin.url("a.mp3"), "--cache-dir", blocker + "/cache"],
            cacheDir: workspace.cacheDirectory,
            mentions: "cache directory"
        )
        if getuid() != 0 {
            let readOnly = workspace.outputDirectory + "/ro"
            try FileManager.default.createDirectory(atPath: readOnly, withIntermediateDirectories: true)
            chmod(readOnly, 0o555)
            try await expectCleanFailure(
                ["get", origin.url("a.mp3"), "--cache-dir", readOnly + "/cache"],
                cacheDir: workspace.cacheDirectory,
                mentions: "cache directory"
            )
        }
    }

    @Test func lsShowsCachedRangesAsABar() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        try workspace.write(TestData.bytes(count: 1_000_000, seed: 52), as: "a.mp3")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        _ = try await CLI.run(["get", origin.url("a.mp3"), "--range", "0-249999"], cacheDir: workspace.cacheDirectory)
        _ = try await CLI.run(
            ["get", origin.url("a.mp3"), "--range", "750000-999999"],
            cacheDir: workspace.cacheDirectory
        )
        let text = try await CLI.run(["ls"], cacheDir: workspace.cacheDirectory).output
        #expect(text.contains("[##########....................##########]"), "\(text)")
        let json =
            (try JSONSerialization.jsonObject(
                with: try await CLI.run(["ls", "--json"], cacheDir: workspace.cacheDirectory).stdout
            ) as? [String: Any])?["resources"] as? [[String: Any]]
        let ranges = json?.first?["ranges"] as? [[String: Int]]
        #expect(ranges == [["offset": 0, "length": 250_000], ["offset": 750_000, "length": 250_000]])
        #expect(json?.first?["cachedBytes"] as? Int == 500_000)
        #expect(try await CLI.run(["rm", origin.url("a.mp3")], cacheDir: workspace.cacheDirectory).status == 0)
        let emptied = try await CLI.run(["ls", "--json"], cacheDir: workspace.cacheDirectory).stdout
        #expect(try JSONDecoder().decode(ListingOf<[String: String]>.self, from: emptied).resources.isEmpty)
    }
}
