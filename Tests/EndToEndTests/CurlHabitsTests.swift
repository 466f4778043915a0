import Foundation
import StreamCacheTesting
import Testing

/// What a user of curl types, and the plain lines a mistake gets.
@Suite(.timeLimit(.minutes(2))) struct CurlHabitsTests {
    @Test func shortRangeAndRemoteNameWorkAsCurlsDo() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 50_000, seed: 2601)
        try workspace.write(data, as: "episode.mp3")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let ranged = try await CLI.run(
            ["get", "-r", "100-199", "-o", workspace.output("part"), origin.url("episode.mp3")],
            cacheDir: workspace.cacheDirectory
        )
        #expect(ranged.status == 0, "\(ranged.stderr)")
        #expect(workspace.read(workspace.output("part")) == Array(data[100...199]))
        let named = try await CLI.run(
            ["get", "-O", origin.url("episode.mp3")],
            cacheDir: workspace.cacheDirectory,
            in: workspace.outputDirectory
        )
        #expect(named.status == 0, "\(named.stderr)")
        let whole = workspace.read(workspace.output("episode.mp3")) == data
        #expect(whole, "-O did not write episode.mp3 in the current folder")
        let both = try await CLI.run(
            ["get", "-O", "-o", "x", origin.url("episode.mp3")],
            cacheDir: workspace.cacheDirectory
        )
        #expect(both.status == 64 && both.stderr.contains("see 'streamcache get --help'"), "\(both.stderr)")
        let nameless = try await CLI.run(["get", "-O", origin.url("")], cacheDir: workspace.cacheDirectory)
        #expect(nameless.status == 23 && nameless.stderr.contains("names no file for -O"), "\(nameless.stderr)")
    }

    @Test func mistakesGetOnePlainLine() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let file = workspace.output("a-file")
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let cases: [(String, [String], String)] = [
            ("--timeout 0", ["get", "http://127.0.0.1:1/a", "--timeout", "0"], "give seconds above 0"),
            ("an id that is no asset", ["hls", "download", "123"], "no asset 123 in the library, and it is not a URL"),
            (
                "a cache folder under a file", ["get", "http://127.0.0.1:1/a", "--cache-dir", file + "/cache"],
                "Not a directory"
            ),
            ("a host that is no address", ["serve", "--host", "0.0.0.0.0"], "not a name or address of this machine"),
        ]
        for (name, arguments, words) in cases {
            let result = try await CLI.run(arguments, cacheDir: workspace.cacheDirectory)
            #expect(result.status != 0, "\(name)")
            #expect(
                result.stderr.split(separator: "\n").count == 1 && result.stderr.contains(words),
                "\(name): \(result.stderr)"
            )
            #expect(!result.stderr.contains("Error"), "\(name) names a Swift type: \(result.stderr)")
        }
    }

    @Test func loweringTheBudgetSaysWhatItEvicted() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        for name in ["a", "b", "c"] {
            try workspace.write(TestData.bytes(count: 300_000, seed: UInt64(name.utf8.first!)), as: name + ".bin")
        }
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        for name in ["a", "b", "c"] {
            let got = try await CLI.run(
                ["get", origin.url(name + ".bin"), "-o", workspace.output(name)],
                cacheDir: workspace.cacheDirectory
            )
            #expect(got.status == 0, "\(got.stderr)")
        }
        let lowered = try await CLI.run(["config", "--max-size", "400K"], cacheDir: workspace.cacheDirectory)
        #expect(lowered.status == 0, "\(lowered.stderr)")
        #expect(
            lowered.output.contains("evicted 2 resource(s): 585.9 KiB freed to fit the new budget"),
            "\(lowered.output)"
        )
    }

    /// A player's saved proxy URL works after a restart: `serve` listens on one port by default.
    @Test func serveListensOnTheSamePortEveryLaunch() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        for _ in 0..<2 {
            let (process, out, _) = try CLI.start(["serve"], cacheDir: workspace.cacheDirectory)
            let line = try await out.firstLine()
            process.terminate()
            try await onOwnThread { process.waitUntilExit() }
            #expect(line.hasPrefix("listening on http://127.0.0.1:8954"), "\(line)")
        }
    }
}
