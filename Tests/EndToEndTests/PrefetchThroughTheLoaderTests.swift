import Foundation
import StreamCache
import StreamCacheHTTP
import StreamCacheOffline
import StreamCacheResourceLoader
import StreamCacheResourceLoaderTesting
import StreamCacheTesting
import Testing

/// After `CacheEngine.prefetch`, the library's resource loader answers AVPlayer's start of an
/// MP3 and of an MP4 whose movie box is at the end (content information and `bytes=0-1`, the
/// movie box, the first five seconds of samples as ffprobe places them) with no request to the
/// origin.
@Suite(.timeLimit(.minutes(3))) struct PrefetchThroughTheLoaderTests {
    @Test func aPlayersStartAfterAPrefetchAsksTheOriginNothing() async throws {
        let folder = TestData.temporaryDirectory("prefetch-loader")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let origin = try await TestOrigin()
        let client = HTTPOriginClient(readTimeout: .seconds(30))
        defer {
            Task {
                try? await client.shutdown()
                await origin.shutdown()
            }
        }
        try FileManager.default.createDirectory(atPath: folder + "/media", withIntermediateDirectories: true)
        let audio = ["-f", "lavfi", "-i", "sine=frequency=440:duration=60"]
        let mp3 = folder + "/media/episode.mp3"
        let mp4 = folder + "/media/episode.mp4"
        try await PrefetchTests.ffmpeg(audio + ["-c:a", "libmp3lame", "-b:a", "128k", mp3])
        try await PrefetchTests.ffmpeg(
            ["-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=60"] + audio
                + ["-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-c:a", "aac", mp4]
        )
        for path in [mp3, mp4] {
            origin.setResource(
                Array(try Data(contentsOf: URL(fileURLWithPath: path))),
                at: "/" + (path as NSString).lastPathComponent
            )
        }
        let engine = try CacheEngine(directory: CacheDirectory(path: folder + "/cache"), origin: client)
        var options = PrefetchOptions()
        options.seconds = 5
        let outcomes = await engine.prefetch(
            [origin.url("/episode.mp3"), origin.url("/episode.mp4")],
            options: options,
            library: OfflineLibrary(directory: folder + "/packages")
        )
        #expect(outcomes.count == 2 && outcomes.allSatisfy { $0.failure == nil }, "\(outcomes.map(\.failure))")
        let before = origin.statistics.requests.count

        let simulator = AVPlayerSimulator(loader: ResourceLoaderEngine(engine: engine))
        // An MP3 of 128 kbit/s: five seconds are its first 80,000 bytes (and a frame).
        _ = try await simulator.openAsset(origin.url("/episode.mp3"))
        try await simulator.load(origin.url("/episode.mp3"), data: (0, 80_000 + 418))
        // The MP4: its movie box at the end, then every packet ffprobe places in the first 5 s.
        let url = origin.url("/episode.mp4")
        _ = try await simulator.openAsset(url)
        let size = Int64(try Data(contentsOf: URL(fileURLWithPath: mp4)).count)
        let moov = try Self.movieBox(of: mp4)
        #expect(moov.upperBound == size, "the movie box is at the end")
        try await simulator.load(url, data: (moov.lowerBound, Int(moov.upperBound - moov.lowerBound)))
        for packet in try await Self.packets(of: mp4, before: 5) {
            try await simulator.load(url, data: (packet.lowerBound, Int(packet.upperBound - packet.lowerBound)))
        }
        let asked = origin.statistics.requests.dropFirst(before).map { "\($0.path) \($0.range ?? "")" }
        #expect(asked.isEmpty, "\(asked)")
        await engine.shutdown()
    }

    /// Where the movie box lies, from the top-level box headers.
    static func movieBox(of path: String) throws -> Range<Int64> {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var offset = 0
        while offset + 8 <= bytes.count {
            let size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            if type == "moov" { return Int64(offset)..<Int64(offset + size) }
            offset += size
        }
        Issue.record("no moov in \(path)")
        return 0..<0
    }

    /// The byte ranges of the packets whose time is before `seconds`, as ffprobe reads them.
    static func packets(of path: String, before seconds: Double) async throws -> [Range<Int64>] {
        let probed = try await Tool.run(
            "ffprobe",
            ["-v", "error", "-show_entries", "packet=dts_time,pos,size", "-of", "csv=p=0", path]
        )
        return probed.output.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ",").map(String.init)
            guard fields.count == 3, let time = Double(fields[0]), time < seconds, let size = Int64(fields[1]),
                let position = Int64(fields[2])
            else { return nil }
            return position..<position + size
        }
    }
}
