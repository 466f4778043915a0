import Foundation
import StreamCacheTesting
import Testing

/// Offline downloads across kills and alongside the streaming cache: `kill -9` at random
/// moments, then a resume that fetches no finished file again; bytes a player already streamed
/// through `serve` are not fetched again; an asset plays through `/offline/` while it downloads.
@Suite(.timeLimit(.minutes(5))) struct OfflineResumeTests {
    /// A download killed inside a file goes on with that file where its durable bytes end: a
    /// range request, not the file again.
    @Test func aFileCutShortByAKillResumesWithARangeRequest() async throws {
        let setup = try await OfflineSetup(originArguments: ["--rate", "100K"])
        defer { setup.remove() }
        let data = TestData.bytes(count: 1_200_000, seed: 930)
        let folder = setup.workspace.originDirectory + "/one"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(data).write(to: URL(fileURLWithPath: folder + "/seg.ts"))
        let playlist = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXTINF:10.0,\nseg.ts\n#EXT-X-ENDLIST\n"
        try playlist.write(toFile: folder + "/index.m3u8", atomically: true, encoding: .utf8)
        let arguments = ["hls", "download", setup.origin.url("one/index.m3u8")]

        let (process, _, errors) = try CLI.start(arguments, cacheDir: setup.workspace.cacheDirectory)
        // Killed once about 300 KB of the file are in the cache (durable batches every second);
        // watched on a thread of its own, so a busy test pool cannot make it late.
        let dataFolder = setup.workspace.cacheDirectory + "/data"
        // The kill is sent from that thread too: a test task resumed late would find it done.
        let killed = try await onOwnThread {
            func written() -> Int {
                let files = (try? FileManager.default.contentsOfDirectory(atPath: dataFolder)) ?? []
                return files.map { name in
                    var info = stat()
                    return stat(dataFolder + "/" + name, &info) == 0 ? Int(info.st_size) : 0
                }.max() ?? 0
            }
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, process.isRunning, written() < 300_000 { usleep(10_000) }
            guard process.isRunning else { return false }
            kill(process.processIdentifier, SIGKILL)
            return true
        }
        if !killed {
            let message = try await errors.text()
            try await onOwnThread { process.waitUntilExit() }
            let how = process.terminationReason == .uncaughtSignal ? "signal" : "status"
            Issue.record(
                "the download ended (\(how) \(process.terminationStatus)) before it could be killed: \(message)"
            )
            return
        }
        try await onOwnThread { process.waitUntilExit() }
        let before = try await setup.origin.stats().requests.count
        let result = try await CLI.run(arguments, cacheDir: setup.workspace.cacheDirectory)
        #expect(result.status == 0, "\(result.stderr)")

        let stats = try await setup.origin.settledStats()
        // After the check that the cached bytes are current (a conditional request, a 304).
        let resumed = stats.requests.dropFirst(before).filter { $0.path.hasSuffix("seg.ts") && $0.status != 304 }
        let start = resumed.first?.range.flatMap { Int($0.dropFirst(6).prefix { $0.isNumber }) } ?? 0
        #expect(start >= 100_000, "the resumed run asked for \(resumed.map { $0.range ?? "the whole file" })")
        // What was not yet recorded at the kill is fetched again: the second of a batch, and the
        // bytes that came while the batch before was made durable (under a loaded test run, up
        // to a second more: 200,704 bytes were seen once). The whole file again would be 1.2 MB.
        #expect(stats.duplicateBytes <= 300_000, "the origin sent \(stats.duplicateBytes) bytes twice")
        let id = try #require(result.output.split(separator: "\n").last.map(String.init))
        let item = try #require(try setup.manifest(id).items.first)
        #expect(FileManager.default.contents(atPath: setup.library + "/" + id + "/" + item.path) == Data(data))
    }

    @Test(arguments: [UInt64(1), 2])
    func killedAtRandomMomentsThenResumedTheAssetIsWholeAndEachFileCameOnce(seed: UInt64) async throws {
        // Per connection 30 KB/s and 50 ms per response: the download takes several seconds, so
        // each run is killed before it can finish.
        let setup = try await OfflineSetup(originArguments: ["--rate", "30K", "--latency", "50"])
        defer { setup.remove() }
        try await TestStreams.make(.variants, in: setup.workspace.originDirectory, seconds: 20, videoBitrate: "1M")
        var random = SeededRandom(seed: seed)
        let arguments = ["hls", "download", setup.origin.url("variants/master.m3u8"), "--audio", "all"]
        var kills = 0
        for round in 0..<4 {
            let (process, _, _) = try CLI.start(arguments, cacheDir: setup.workspace.cacheDirectory)
            let moment = Double.random(in: 0.2...1.2, using: &random)
            try await Task.sleep(for: .milliseconds(Int(moment * 1000)))
            guard process.isRunning else { break }
            kill(process.processIdentifier, SIGKILL)
            try await onOwnThread { process.waitUntilExit() }
            kills += 1
            // What was finished before the kill is never asked for again.
            let done = try finishedURLs(setup)
            let before = try await setup.origin.stats().requests.count
            let (next, _, _) = try CLI.start(arguments, cacheDir: setup.workspace.cacheDirectory)
            try await Task.sleep(for: .milliseconds(Int(Double.random(in: 0.2...1.2, using: &random) * 1000)))
            if next.isRunning {
                kill(next.processIdentifier, SIGKILL)
                kills += 1
            }
            try await onOwnThread { next.waitUntilExit() }
            let again = try await setup.origin.stats().requests.dropFirst(before)
                .filter { done.contains(setup.origin.url(String($0.path.dropFirst()))) }
            #expect(again.isEmpty, "seed \(seed), round \(round): fetched again: \(again.map(\.path))")
        }
        let last = try await CLI.run(arguments, cacheDir: setup.workspace.cacheDirectory)
        #expect(last.status == 0, "seed \(seed): \(last.stderr)")
        #expect(kills >= 2, "seed \(seed): the download ended before it could be killed")
        let asset = try #require(try await setup.assets().first)
        #expect(asset.state == "complete")
        let manifest = try setup.manifest(asset.id)
        // Origin bytes: the asset once, plus at most what the jobs had in flight at each kill.
        // Every body byte sent, those of requests cut by a kill too (the request list has only the
        // answers that ended), less the playlists'.
        let stats = try await setup.origin.settledStats()
        let media =
            stats.bodyBytes - stats.requests.filter { $0.path.hasSuffix(".m3u8") }.reduce(0) { $0 + $1.bodyBytes }
        let assetBytes = manifest.items.reduce(Int64(0)) { total, item in
            total
                + ((try? FileManager.default.attributesOfItem(atPath: setup.library + "/" + asset.id + "/" + item.path)[
                    .size
                ] as? Int64) ?? 0)
        }
        let largest =
            manifest.items.map { item in
                (try? FileManager.default.attributesOfItem(atPath: setup.library + "/" + asset.id + "/" + item.path)[
                    .size
                ] as? Int64) ?? 0
            }.max() ?? 0
        let bound = assetBytes + Int64(kills) * 4 * largest
        #expect(
            media >= assetBytes && media <= bound,
            "seed \(seed): \(media) origin bytes for a \(assetBytes)-byte asset, \(kills) kills, bound \(bound)"
        )
        for rendition in manifest.renditions {
            let local = try await TestStreams.frames(
                setup.library + "/" + asset.id + "/" + rendition.folder + "/index.m3u8"
            )
            let original = try await TestStreams.frames(
                setup.workspace.originDirectory + "/variants/" + (rendition.url as NSString).lastPathComponent
            )
            let same = local == original
            #expect(same, "seed \(seed): \(rendition.folder) differs after \(kills) kills")
        }
    }

    /// The origin URLs of the files of the package that are finished now.
    private func finishedURLs(_ setup: OfflineSetup) throws -> Set<String> {
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: setup.library)) ?? []
        var urls: Set<String> = []
        for id in ids where FileManager.default.fileExists(atPath: setup.library + "/" + id + "/asset.json") {
            for item in try setup.manifest(id).items
            where FileManager.default.fileExists(atPath: setup.library + "/" + id + "/" + item.path) {
                urls.insert(item.url)
            }
        }
        return urls
    }

    @Test func bytesAPlayerStreamedThroughServeAreNotFetchedAgain() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.variants, in: setup.workspace.originDirectory)
        let proxy = try await ListeningProcess(["serve"], cacheDir: setup.workspace.cacheDirectory)
        let play = try await Tool.run(
            "ffmpeg",
            ["-v", "error", "-i", proxy.url(setup.origin.url("variants/master.m3u8")), "-map", "0", "-f", "null", "-"]
        )
        #expect(play.status == 0, "\(play.stderr)")
        try await proxy.stop()
        let before = try await setup.origin.stats().requests.count

        let result = try await setup.download("variants/master.m3u8", "--audio", "all")
        #expect(result.status == 0, "\(result.stderr)")
        let later = try await setup.origin.stats().requests.dropFirst(before)
        // The cache may ask whether its copies are current (a 304 costs no body), nothing more.
        let segments = later.filter { !$0.path.hasSuffix(".m3u8") && $0.bodyBytes > 0 }
        #expect(segments.isEmpty, "fetched again: \(segments.map(\.path))")
        let asset = try #require(try await setup.assets().first)
        let local = try await TestStreams.frames(setup.library + "/" + asset.id + "/video/index.m3u8")
        let original = try await TestStreams.frames(setup.origin.url("variants/p0.m3u8"))
        let same = local == original
        #expect(same)
    }

    @Test func anAssetPlaysThroughServeWhileItDownloads() async throws {
        // 15 KB/s: the 10 s stream takes several seconds to download, one file at a time.
        let setup = try await OfflineSetup(originArguments: ["--rate", "15K"])
        defer { setup.remove() }
        try await TestStreams.make(.ts, in: setup.workspace.originDirectory, seconds: 10)
        let (download, _, _) = try CLI.start(
            ["hls", "download", setup.origin.url("ts/index.m3u8"), "--jobs", "1"],
            cacheDir: setup.workspace.cacheDirectory
        )
        defer { if download.isRunning { kill(download.processIdentifier, SIGKILL) } }
        // Wait for the package's record, written after its playlists: from then on it is listed.
        var id: String?
        for _ in 0..<200 where id == nil {
            try await Task.sleep(for: .milliseconds(50))
            let names = (try? FileManager.default.contentsOfDirectory(atPath: setup.library)) ?? []
            id = names.first { FileManager.default.fileExists(atPath: setup.library + "/\($0)/asset.json") }
        }
        let asset = try #require(id)
        // Held mid-way while the player plays, so that a loaded machine slow to start the proxy
        // cannot let the download finish first: the package stays part-downloaded, its lock held.
        try #require(download.isRunning, "the download ended before its package could be played")
        try await stopOutsideIndexWrite(download.processIdentifier, cacheDir: setup.workspace.cacheDirectory)
        let proxy = try await ListeningProcess(["serve"], cacheDir: setup.workspace.cacheDirectory)
        let listed = try await setup.assets()
        #expect(listed.first?.state == "downloading", "\(listed.map(\.state))")
        #expect((listed.first?.progress ?? 1) < 1)
        let served = try await TestStreams.frames(proxy.url("offline/\(asset)/video/index.m3u8"))
        let original = try await TestStreams.frames(setup.workspace.originDirectory + "/ts/index.m3u8")
        let same = served == original
        #expect(same, "\(served.count) frames while downloading, \(original.count) in the stream")
        try await proxy.stop()
        kill(download.processIdentifier, SIGCONT)
        let finished = try await onOwnThread {
            download.waitUntilExit()
            return download.terminationStatus
        }
        #expect(finished == 0)
    }
}
