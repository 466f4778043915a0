import Foundation
import StreamCacheTesting
import Testing

/// An offline download and the streaming cache store each file the origin sent once: the
/// package's file and the cache's data file are one file under two names. `hls rm` frees both.
@Suite(.timeLimit(.minutes(3))) struct OneCopyOnDiskTests {
    /// The bytes `folders` take on disk, each file counted once however many names it has.
    static func diskUsage(_ folders: [String]) -> Int64 {
        var seen = Set<[UInt64]>()
        var total: Int64 = 0
        for folder in folders {
            guard let walker = FileManager.default.enumerator(atPath: folder) else { continue }
            for case let name as String in walker {
                var info = stat()
                guard lstat(folder + "/" + name, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
                    seen.insert([UInt64(info.st_dev), UInt64(info.st_ino)]).inserted
                else { continue }
                total += Int64(info.st_blocks) * 512
            }
        }
        return total
    }

    enum Origin: String, CaseIterable { case pythonHTTPServer, nginx }

    @Test(arguments: Origin.allCases)
    func aDownloadTakesTheDiskOnceAndHlsRmFreesIt(origin kind: Origin) async throws {
        if kind == .nginx, !LinuxTools.nginx { return }
        let workspace = Workspace()
        defer { workspace.remove() }
        let folder = workspace.originDirectory + "/show"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var playlist = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n"
        let segments = 4
        let segmentSize = 5_000_000
        for index in 0..<segments {
            try Data(TestData.bytes(count: segmentSize, seed: 730 + UInt64(index)))
                .write(to: URL(fileURLWithPath: folder + "/s\(index).ts"))
            playlist += "#EXTINF:10.0,\ns\(index).ts\n"
        }
        try (playlist + "#EXT-X-ENDLIST\n").write(toFile: folder + "/index.m3u8", atomically: true, encoding: .utf8)
        let url: String
        var python: PythonOrigin?
        var nginx: NginxProcess?
        switch kind {
        case .pythonHTTPServer:
            python = try await PythonOrigin(directory: workspace.originDirectory)
            url = python!.url("show/index.m3u8")
        case .nginx:
            nginx = try await NginxProcess(root: workspace.originDirectory)
            url = nginx!.url("show/index.m3u8")
        }
        defer { python?.stop() }
        let library = workspace.outputDirectory + "/library"
        let download = try await CLI.run(
            ["hls", "download", url, "--library", library],
            cacheDir: workspace.cacheDirectory
        )
        #expect(download.status == 0, "\(download.stderr)")
        let id = String(download.output.split(separator: "\n").first ?? "")
        let media = Double(segments * segmentSize)
        let used = Self.diskUsage([workspace.cacheDirectory, library])
        #expect(Double(used) <= 1.05 * media, "cache and package take \(used) bytes for \(Int(media)) of media")

        let listed = try await CLI.run(["hls", "ls", "--library", library], cacheDir: workspace.cacheDirectory)
        #expect(!listed.output.contains("disk space of their own"), "\(listed.output)")

        // Eviction of a file the package shares drops the cache's name, never the bytes.
        let segment = url.replacingOccurrences(of: "index.m3u8", with: "s1.ts")
        let unpinned = try await CLI.run(["unpin", segment], cacheDir: workspace.cacheDirectory)
        #expect(unpinned.status == 0, "\(unpinned.stderr)")
        let evicted = try await CLI.run(["config", "--max-size", "1M"], cacheDir: workspace.cacheDirectory)
        #expect(evicted.status == 0 && evicted.output.contains("evicted 1 resource"), "\(evicted.output)")
        #expect(
            workspace.read(library + "/\(id)/video/00001.ts") == TestData.bytes(count: segmentSize, seed: 731),
            "eviction changed the package"
        )

        // The package keeps its bytes with the cache emptied.
        let removedCache = try await CLI.run(["rm", "--all"], cacheDir: workspace.cacheDirectory)
        #expect(removedCache.status == 0, "\(removedCache.stderr)")
        let alone = try await CLI.run(["hls", "ls", "--library", library], cacheDir: workspace.cacheDirectory)
        #expect(alone.output.contains("    \(segments) file(s) take disk space of their own"), "\(alone.output)")
        let kept = workspace.read(library + "/\(id)/video/00002.ts")
        #expect(kept == TestData.bytes(count: segmentSize, seed: 732), "the package lost bytes with the cache")

        let again = try await CLI.run(
            ["hls", "download", url, "--library", library],
            cacheDir: workspace.cacheDirectory
        )
        #expect(again.status == 0, "\(again.stderr)")
        let removed = try await CLI.run(["hls", "rm", id, "--library", library], cacheDir: workspace.cacheDirectory)
        #expect(removed.status == 0, "\(removed.stderr)")
        let left = Self.diskUsage([workspace.cacheDirectory, library])
        #expect(Double(left) <= 0.05 * media, "\(left) bytes left after hls rm")
        withExtendedLifetime(nginx) {}
    }
}
