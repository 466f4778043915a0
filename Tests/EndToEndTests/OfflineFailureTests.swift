import Foundation
import Testing

/// How `hls download` fails: one line naming what failed, never a skipped segment; what it
/// refuses before fetching a segment; and a flaky origin that it rides out.
@Suite(.timeLimit(.minutes(5))) struct OfflineFailureTests {
    @Test func aMissingSegmentFailsTheDownloadNamingItAndARunAfterTheFixCompletes() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.ts, in: setup.workspace.originDirectory)
        let segment = setup.workspace.originDirectory + "/ts/index1.ts"
        let kept = setup.workspace.originDirectory + "/kept.ts"
        try FileManager.default.moveItem(atPath: segment, toPath: kept)
        let failed = try await setup.download("ts/index.m3u8")
        #expect(failed.status == 22)
        #expect(failed.output.isEmpty, "an id was printed for a failed download: \(failed.output)")
        let lines = failed.stderr.split(separator: "\n").filter { $0.hasPrefix("streamcache: error:") }
        #expect(lines.count == 1, "\(failed.stderr)")
        #expect(
            failed.stderr.contains(setup.origin.url("ts/index1.ts")) && failed.stderr.contains("404"),
            "\(failed.stderr)"
        )
        let asset = try #require(try await setup.assets().first)
        #expect(asset.state == "failed" && asset.progress < 1)
        // A 404 is not tried again: the size estimate asked for its first bytes, then its job
        // asked for the file once.
        let asked = try await setup.origin.stats().requests.filter { $0.path == "/ts/index1.ts" }
        #expect(asked.count == 2, "\(asked.map(\.range))")

        // A link planted where the resume writes the missing file is removed, never followed.
        let package = setup.library + "/" + asset.id
        let files = FileManager.default.enumerator(atPath: package)?.compactMap { $0 as? String } ?? []
        let done = try #require(files.first { $0.hasSuffix(".ts") }, "\(asset.path): \(files)")
        let victim = setup.workspace.output("victim.txt")
        try "not a segment".write(toFile: victim, atomically: true, encoding: .utf8)
        // The second segment's file, where the first is `FOLDER/00000.ts`.
        let planted = package + "/" + (done as NSString).deletingLastPathComponent + "/00001.ts.partial"
        #expect(!files.contains { $0.hasSuffix("00001.ts") }, "\(files)")
        try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: victim)

        // An unfinished asset resumes by its id, as `hls ls` lists it.
        try FileManager.default.moveItem(atPath: kept, toPath: segment)
        let fixed = try await CLI.run(["hls", "download", asset.id], cacheDir: setup.workspace.cacheDirectory)
        #expect(fixed.status == 0, "\(fixed.stderr)")
        #expect(fixed.output.split(separator: "\n").last.map(String.init) == asset.id)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "not a segment", "the planted link was followed")
        let frames = try await TestStreams.frames(asset.path)
        let original = try await TestStreams.frames(setup.origin.url("ts/index.m3u8"))
        let same = frames == original
        #expect(same)
    }

    @Test func aFlakyOriginConverges() async throws {
        // Every path answers 503 first, then resets halfway through, then works.
        let setup = try await OfflineSetup(originArguments: ["--fault", "flaky"])
        defer { setup.remove() }
        for kind in [TestStreams.Kind.variants, .single] {
            try await TestStreams.make(kind, in: setup.workspace.originDirectory)
            let result = try await setup.download(kind.playlist, "--audio", "all")
            #expect(result.status == 0, "\(kind): \(result.stderr)")
            let id = try #require(result.output.split(separator: "\n").last.map(String.init))
            let manifest = try setup.manifest(id)
            for rendition in manifest.renditions {
                let local = try await TestStreams.frames(
                    setup.library + "/" + id + "/" + rendition.folder + "/index.m3u8"
                )
                #expect(!local.isEmpty)
                let original = try await TestStreams.frames(
                    setup.workspace.originDirectory + "/" + kind.rawValue + "/"
                        + (rendition.url as NSString).lastPathComponent
                )
                let same = local == original
                #expect(same, "\(kind) \(rendition.folder)")
            }
        }
        let statuses = try await setup.origin.stats().requests.map(\.status)
        #expect(statuses.contains(503))
    }

    @Test func anOriginThatKeepsFailingEndsTheDownloadAfterThreeAttempts() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.ts, in: setup.workspace.originDirectory)
        let origin = try await OriginProcess(
            directory: setup.workspace.originDirectory,
            arguments: ["--fault", "status=503"]
        )
        let result = try await CLI.run(
            ["hls", "download", origin.url("ts/index.m3u8")],
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(result.status == 22)
        #expect(result.stderr.contains("cannot fetch manifest") && result.stderr.contains("503"), "\(result.stderr)")
        // Settled: the origin counts an answer once it is written, which can be after the tool
        // has read the third 503 and exited.
        let requests = try await origin.settledStats().requests
        #expect(requests.count == 3, "\(requests.map { "\($0.path) \($0.status)" })")
    }

    @Test func anEncodedBodyIsNeverKept() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.ts, in: setup.workspace.originDirectory)
        let origin = try await OriginProcess(
            directory: setup.workspace.originDirectory,
            arguments: ["--fault", "gzip-encoding"]
        )
        let result = try await CLI.run(
            ["hls", "download", origin.url("ts/index.m3u8")],
            cacheDir: setup.workspace.cacheDirectory
        )
        #expect(result.status == 1)
        #expect(result.stderr.contains("Content-Encoding: gzip"), "\(result.stderr)")
        #expect(try await setup.assets().isEmpty)
    }

    @Test func drmAndOversizedAssetsAreRefusedBeforeAnySegment() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory
        let segments = "#EXTINF:4,\na.ts\n#EXTINF:4,\nb.ts\n"
        try
            "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"skd://key\",KEYFORMAT=\"com.apple.streamingkeydelivery\"\n\(segments)#EXT-X-ENDLIST\n"
            .write(toFile: folder + "/fairplay.m3u8", atomically: true, encoding: .utf8)
        try
            "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-KEY:METHOD=AES-128,URI=\"k.bin\",KEYFORMAT=\"com.example.drm\"\n\(segments)#EXT-X-ENDLIST\n"
            .write(toFile: folder + "/keyformat.m3u8", atomically: true, encoding: .utf8)
        try "#EXTM3U\n#EXT-X-TARGETDURATION:4\n\(segments)#EXT-X-ENDLIST\n"
            .write(toFile: folder + "/vod.m3u8", atomically: true, encoding: .utf8)
        try "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=10000000000000\nvod.m3u8\n"
            .write(toFile: folder + "/huge.m3u8", atomically: true, encoding: .utf8)
        // URIs that would point a player at this machine's files, or that nothing can fetch.
        let local = [
            ("key-file.m3u8", "#EXT-X-KEY:METHOD=AES-128,URI=\"file:///etc/passwd\"\n\(segments)"),
            ("map-file.m3u8", "#EXT-X-MAP:URI=\"file:///etc/hostname\"\n\(segments)"),
            ("segment-gopher.m3u8", "#EXTINF:4,\na.ts\n#EXTINF:4,\ngopher://127.0.0.1/b.ts\n"),
            ("segment-file.m3u8", "#EXTINF:4,\nfile:///etc/passwd\n"),
        ]
        for (name, body) in local {
            try "#EXTM3U\n#EXT-X-TARGETDURATION:4\n\(body)#EXT-X-ENDLIST\n"
                .write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
        }
        let cases =
            local.map { ($0.0, "not an http(s) URL") } + [
                ("fairplay.m3u8", "DRM-protected"),
                ("keyformat.m3u8", "DRM-protected"),
                ("huge.m3u8", "the asset needs about"),
                ("missing.m3u8", "404"),
            ]
        for (name, message) in cases {
            let result = try await setup.download(name)
            // 22 as curl for an origin's error status, 1 for the rest.
            #expect(result.status == (name == "missing.m3u8" ? 22 : 1), "\(name)")
            #expect(
                result.stderr.split(separator: "\n").count == 1 && result.stderr.contains(message),
                "\(name): \(result.stderr)"
            )
        }
        // Of the segments, only the first bytes of those the size estimate samples.
        let fetched = try await setup.origin.stats().requests
        #expect(
            fetched.allSatisfy { $0.path.hasSuffix(".m3u8") || $0.range == "bytes=0-1" },
            "\(fetched.map { "\($0.path) \($0.range ?? "")" })"
        )
        #expect(try await setup.assets().isEmpty)
    }
}
