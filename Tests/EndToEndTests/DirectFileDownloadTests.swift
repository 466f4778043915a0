import Foundation
import StreamCacheTesting
import Testing

/// `download` of a URL that names a media file writes the file, as yt-dlp does, through the
/// cache and with no package; `-o` names it, a template from the URL's file name.
@Suite(.timeLimit(.minutes(2))) struct DirectFileDownloadTests {
    @Test func aMediaFileURLIsWrittenAsTheFile() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let data = TestData.bytes(count: 3_000_000, seed: 981)
        try setup.workspace.write(data, as: "episode.mp3")
        let folder = setup.workspace.outputDirectory
        let url = setup.origin.url("episode.mp3")
        for (arguments, name) in [
            ([], "episode.mp3"), (["-o", "%(title)s.%(ext)s"], "episode.mp3"), (["-o", "x.mp3"], "x.mp3"),
        ] {
            let result = try await CLI.run(
                ["download", url] + arguments,
                cacheDir: setup.workspace.cacheDirectory,
                in: folder
            )
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(setup.workspace.read(folder + "/" + name) == data, "\(arguments)")
            try? FileManager.default.removeItem(atPath: folder + "/" + name)
        }
        #expect(try await setup.assets().isEmpty, "a package was made of a file")
        // Once from the origin, then from the cache.
        let fetched = try await setup.origin.stats().requests.filter { $0.path == "/episode.mp3" }
        #expect(fetched.reduce(0) { $0 + $1.bodyBytes } == data.count, "\(fetched.map(\.range))")
    }
}
