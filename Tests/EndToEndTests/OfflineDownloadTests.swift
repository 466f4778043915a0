import Foundation
import StreamCacheTesting
import Testing

/// `streamcache hls download`, `hls ls`, `hls rm` and `serve`'s `/offline/`, through the built
/// binary, on streams made by ffmpeg and served by `streamcache origin`; ffmpeg checks that the
/// packages decode to the same frames as the origin's streams.
@Suite(.timeLimit(.minutes(5))) struct OfflineDownloadTests {
    /// Each kind of stream downloads (every rendition), decodes from disk to the origin's frames,
    /// and plays the same through `serve`'s `/offline/` with the origin stopped.
    @Test(arguments: TestStreams.Kind.allCases)
    func downloadsPlayFromDiskAndThroughServeWithTheOriginDown(kind: TestStreams.Kind) async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(kind, in: setup.workspace.originDirectory)
        let result = try await setup.download(kind.playlist, "--audio", "all", "--subtitles", "all")
        #expect(result.status == 0, "\(kind): \(result.stderr)")
        let id = try #require(result.output.split(separator: "\n").last.map(String.init))
        if kind == .single {
            // Byte ranges of one file that follow each other come in one request.
            let requests = try await setup.origin.stats().requests.filter { !$0.path.hasSuffix(".m3u8") }
            #expect(requests.count == 1, "\(requests.map { "\($0.path) \($0.range ?? "")" })")
        }

        let asset = try #require(try await setup.assets().first)
        #expect(asset.id == id && asset.state == "complete" && asset.progress == 1)
        let manifest = try setup.manifest(id)
        let package = ((setup.library + "/" + id) as NSString).standardizingPath
        #expect(asset.path == package + "/" + manifest.mainPlaylist)
        // One entry point for every package, from disk too.
        #expect(manifest.mainPlaylist == "master.m3u8")
        // From disk with stock ffmpeg and ffprobe, no flags (AES-128 segments are kept decrypted).
        let fromDisk = try await Tool.run("ffmpeg", ["-v", "error", "-i", asset.path, "-map", "0", "-f", "null", "-"])
        #expect(
            fromDisk.status == 0 && (fromDisk.stderr.isEmpty || kind == .discontinuity),
            "\(kind): \(fromDisk.stderr)"
        )
        for rendition in manifest.renditions {
            let probed = try await Tool.run("ffprobe", ["-v", "error", package + "/" + rendition.playlistPath])
            #expect(probed.status == 0 && probed.stderr.isEmpty, "\(kind) \(rendition.folder): \(probed.stderr)")
        }

        // Every rendition decodes from disk to the origin's frames.
        var expected: [String: [String]] = [:]
        for rendition in manifest.renditions {
            let original = try await TestStreams.frames(rendition.url)
            #expect(original.count > 1, "\(kind) \(rendition.folder): nothing decoded")
            let local = try await TestStreams.frames(package + "/" + rendition.folder + "/index.m3u8")
            let same = local == original
            #expect(
                same,
                "\(kind) \(rendition.folder): \(local.count) frames from disk, \(original.count) from the origin"
            )
            expected[rendition.folder] = original
        }
        // No key in a package: its playlists name none, and it holds no key file.
        #expect(!manifest.items.contains { $0.kind == "key" })
        for rendition in manifest.renditions {
            let text = try String(contentsOfFile: package + "/" + rendition.playlistPath, encoding: .utf8)
            #expect(!text.contains("#EXT-X-KEY"), "\(kind) \(rendition.folder): \(text)")
        }

        // A player that opens the original URL gets what the download fetched (one store). With
        // two variants, ffmpeg opens both; only one was downloaded.
        let originalURL = setup.origin.url(kind.playlist)
        let originalMain = kind == .variants ? [] : try await TestStreams.frames(originalURL)

        // The same through serve, with no origin at all.
        try await setup.origin.stop()
        let proxy = try await ListeningProcess(["serve"], cacheDir: setup.workspace.cacheDirectory)
        for rendition in manifest.renditions {
            let served = try await TestStreams.frames(proxy.url("offline/\(id)/\(rendition.folder)/index.m3u8"))
            let same = served == expected[rendition.folder]
            #expect(same, "\(kind) \(rendition.folder) through /offline/: \(served.count) frames")
        }
        let main = try await Tool.run(
            "ffmpeg",
            ["-v", "error", "-i", proxy.url("offline/\(id)/\(manifest.mainPlaylist)"), "-map", "0", "-f", "null", "-"]
        )
        #expect(
            main.status == 0 && (main.stderr.isEmpty || kind == .discontinuity),
            "\(kind) through /offline/: \(main.stderr)"
        )
        for rendition in manifest.renditions {
            let served = try await TestStreams.frames(proxy.url(rendition.url))
            let same = served == expected[rendition.folder]
            #expect(same, "\(kind) \(rendition.folder) at its origin URL: \(served.count) frames")
        }
        if kind != .variants {
            let served = try await TestStreams.frames(proxy.url(originalURL))
            let same = served == originalMain
            #expect(same, "\(kind) at its origin URL: \(served.count) frames of \(originalMain.count)")
        }
        try await proxy.stop()
    }
}

extension OfflineDownloadTests {
    /// Two files of 4 MB and four jobs: the two jobs with no file of their own read the back half
    /// of each through the cache, so each file comes over two connections at once (the origin's
    /// 256 KiB/s each), and the package holds them whole. A file's own job may have asked for the
    /// whole file before the back half was claimed: its request is then cut at the middle, and
    /// only what it had in flight there is sent twice. The pace keeps a file's own job far from
    /// its middle for seconds, so a busy test run that starts the jobs reading ahead late still
    /// finds it unread.
    @Test func jobsWithNoFileLeftReadAheadInTheFilesInFlight() async throws {
        let setup = try await OfflineSetup(originArguments: ["--rate", "256K"])
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/show"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let size = 4_000_000
        for (index, name) in ["a.ts", "b.ts"].enumerated() {
            try Data(TestData.bytes(count: size, seed: 90 + UInt64(index)))
                .write(to: URL(fileURLWithPath: folder + "/" + name))
        }
        try "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10.0,\na.ts\n#EXTINF:10.0,\nb.ts\n#EXT-X-ENDLIST\n"
            .write(toFile: folder + "/index.m3u8", atomically: true, encoding: .utf8)

        let result = try await setup.download("show/index.m3u8", "--jobs", "4")
        #expect(result.status == 0, "\(result.stderr)")
        let stats = try await setup.origin.settledStats()
        // A cut request's bytes in flight: what the origin sent past the cut while the client
        // caught up, 256 KiB a second (a few KiB here; a back half sent twice would be 2 MB).
        #expect(stats.duplicateBytes < 256 << 10, "\(stats.duplicateBytes) bytes sent twice")
        for (index, name) in ["a.ts", "b.ts"].enumerated() {
            let starts = stats.requests.filter { $0.path == "/show/" + name }.compactMap { request in
                request.range.flatMap { Int($0.dropFirst("bytes=".count).prefix { $0 != "-" }) }
            }
            // The back half, asked for by the job that read ahead (its own job asks from 0, once
            // its answer has told the length).
            #expect(starts.contains(size / 2), "\(name) was asked for at \(starts)")
            let id = try #require(try await setup.assets().first?.id)
            let kept = try #require(
                setup.manifest(id).items.first { $0.url.hasSuffix(name) }.map {
                    setup.library + "/" + id + "/" + $0.path
                }
            )
            #expect(setup.workspace.read(kept) == TestData.bytes(count: size, seed: 90 + UInt64(index)))
        }
    }

    /// A package made before every package had `master.m3u8` (downloaded from a media playlist,
    /// its entry point was `video/index.m3u8`) gets one when a player asks for it.
    @Test func anOlderPackageGetsItsEntryPoint() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.ts, in: setup.workspace.originDirectory)
        let result = try await setup.download(TestStreams.Kind.ts.playlist)
        let id = try #require(result.output.split(separator: "\n").last.map(String.init))
        let package = setup.library + "/" + id
        // As an older version wrote it.
        let manifestPath = package + "/asset.json"
        var manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: manifestPath)))
                as? [String: Any]
        )
        var playlists = try #require(manifest["playlists"] as? [String: Any])
        playlists["master.m3u8"] = nil
        manifest["playlists"] = playlists
        manifest["mainPlaylist"] = "video/index.m3u8"
        try JSONSerialization.data(withJSONObject: manifest).write(to: URL(fileURLWithPath: manifestPath))
        try FileManager.default.removeItem(atPath: package + "/master.m3u8")

        try await setup.origin.stop()
        let proxy = try await ListeningProcess(["serve"], cacheDir: setup.workspace.cacheDirectory)
        let played = try await Tool.run(
            "ffmpeg",
            ["-v", "error", "-i", proxy.url("offline/\(id)/master.m3u8"), "-map", "0", "-f", "null", "-"]
        )
        #expect(played.status == 0 && played.stderr.isEmpty, "\(played.stderr)")
        try await proxy.stop()
    }
}

/// An origin of test streams, a cache directory and its offline library.
struct OfflineSetup {
    let workspace = Workspace()
    let origin: OriginProcess

    init(originArguments: [String] = []) async throws {
        origin = try await OriginProcess(directory: workspace.originDirectory, arguments: originArguments)
    }

    /// The default library of the cache directory.
    var library: String { workspace.cacheDirectory + "/packages" }

    /// `streamcache hls download ORIGIN/PLAYLIST ARGS…`.
    func download(
        _ playlist: String,
        _ arguments: String...,
        timeout: Duration = .seconds(120)
    ) async throws
        -> ProcessResult
    {
        try await download(playlist, arguments, timeout: timeout)
    }

    /// `streamcache hls download ORIGIN/PLAYLIST ARGS…`, or with `command` `["download"]`,
    /// `streamcache download …`.
    func download(
        _ playlist: String,
        _ arguments: [String],
        command: [String] = ["hls", "download"],
        timeout: Duration = .seconds(120)
    ) async throws
        -> ProcessResult
    {
        try await CLI.run(
            command + [origin.url(playlist)] + arguments,
            cacheDir: workspace.cacheDirectory,
            timeout: timeout
        )
    }

    /// `streamcache hls ls --json`.
    func assets() async throws -> [ListedAsset] {
        let listing = try await CLI.run(["hls", "ls", "--json"], cacheDir: workspace.cacheDirectory)
        #expect(listing.status == 0, "\(listing.stderr)")
        return try JSONDecoder().decode([ListedAsset].self, from: listing.stdout)
    }

    /// The package's `asset.json`.
    func manifest(_ id: String) throws -> Manifest {
        let data = try Data(contentsOf: URL(fileURLWithPath: library + "/" + id + "/asset.json"))
        return try JSONDecoder().decode(Manifest.self, from: data)
    }

    func remove() { workspace.remove() }

    /// Writes `show/index.m3u8` under the origin's folder: a VOD media playlist of two 300 kB
    /// segments of seeded bytes.
    ///
    /// - Returns: the playlist's text.
    func writeTwoSegmentShow(seed: UInt64) throws -> String {
        let folder = workspace.originDirectory + "/show"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (index, name) in ["a.ts", "b.ts"].enumerated() {
            try Data(TestData.bytes(count: 300_000, seed: seed + UInt64(index)))
                .write(to: URL(fileURLWithPath: folder + "/" + name))
        }
        let playlist =
            "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n"
            + "#EXTINF:10.0,\na.ts\n#EXTINF:10.0,\nb.ts\n#EXT-X-ENDLIST\n"
        try playlist.write(toFile: folder + "/index.m3u8", atomically: true, encoding: .utf8)
        return playlist
    }

    /// An asset as `hls ls --json` shows it.
    struct ListedAsset: Decodable {
        struct Variant: Decodable {
            let bandwidth: Int64
            let resolution: String?
            let codecs: String?
        }
        let id: String
        let url: String
        let state: String
        let progress: Double
        let bytes: Int64
        let duration: Double
        let variant: Variant?
        let audio: [String]
        let subtitles: [String]
        let path: String
        let created: String
        /// A live recording's account.
        struct Recording: Decodable {
            let lostSegments: Int
            let lostSeconds: Double
            let ended: String?
        }
        let recording: Recording?
    }

    /// The parts of `asset.json` the tests look at.
    struct Manifest: Decodable {
        struct Rendition: Decodable {
            let kind: String
            let folder: String
            let url: String
            var playlistPath: String { folder + "/index.m3u8" }
        }
        struct Item: Decodable {
            let kind: String
            let path: String
            let url: String
            let length: Int64?
        }
        let mainPlaylist: String
        let renditions: [Rendition]
        let items: [Item]
    }
}
