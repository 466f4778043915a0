import Foundation
import StreamCacheTesting
import Testing

/// Offline packages are data the user keeps: under XDG's data folder, not the cache a cleaner
/// empties; a library made before where earlier versions kept it (the cache directory's `hls`
/// folder, then the data folder's `hls`) is moved there.
@Suite(.timeLimit(.minutes(3))) struct LibraryLocationTests {
    /// `streamcache ARGS` with HOME at `home` and nothing else saying where things go.
    func run(_ arguments: [String], home: String) async throws -> ProcessResult {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home
        for name in ["STREAMCACHE_DIR", "STREAMCACHE_LIBRARY", "XDG_CACHE_HOME", "XDG_DATA_HOME"] {
            environment[name] = nil
        }
        process.environment = environment
        return try await process.runToCompletion(timeout: .seconds(120))
    }

    @Test(arguments: [".cache/streamcache/hls", ".local/share/streamcache/hls"])
    func packagesLiveInTheDataFolderAndAnOldLibraryMovesThere(oldPlace: String) async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.ts, in: setup.workspace.originDirectory)
        let home = setup.workspace.outputDirectory + "/home"
        let oldLibrary = home + "/" + oldPlace
        let newLibrary = home + "/.local/share/streamcache/packages"
        // A package where an older version kept them, made under the group's older name.
        let old = try await run(
            ["hls", "download", setup.origin.url(TestStreams.Kind.ts.playlist), "--library", oldLibrary],
            home: home
        )
        #expect(old.status == 0, "\(old.stderr)")
        let id = try #require(old.output.split(separator: "\n").last.map(String.init))

        let listed = try await run(["packages", "ls"], home: home)
        #expect(listed.status == 0 && listed.output.contains(id), "\(listed.output) \(listed.stderr)")
        #expect(
            listed.stderr.contains("moved the offline library from ")
                && listed.stderr.contains("/\(oldPlace) to ")
                && listed.stderr.hasSuffix("/.local/share/streamcache/packages\n"),
            "\(listed.stderr)"
        )
        #expect(FileManager.default.fileExists(atPath: newLibrary + "/" + id + "/master.m3u8"))
        #expect(!FileManager.default.fileExists(atPath: oldLibrary))

        // New packages go there too, and the move is said once.
        try await TestStreams.make(.single, in: setup.workspace.originDirectory)
        let new = try await run(
            ["packages", "download", setup.origin.url(TestStreams.Kind.single.playlist)],
            home: home
        )
        #expect(new.status == 0 && !new.stderr.contains("moved"), "\(new.stderr)")
        let newID = try #require(new.output.split(separator: "\n").last.map(String.init))
        #expect(FileManager.default.fileExists(atPath: newLibrary + "/" + newID + "/master.m3u8"))
        // Both, under either name of the group.
        let both = try await run(["hls", "ls"], home: home)
        #expect(both.output.contains(id) && both.output.contains(newID), "\(both.output)")
    }
}
