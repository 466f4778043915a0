import Foundation
import StreamCache
import StreamCacheOffline
import StreamCacheServer
import StreamCacheTesting
import StreamCacheURLSession
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The code of the DocC articles, as written there, compiled and run against a test origin: an
/// article whose code stops compiling against the public API fails here. Where an article says
/// `.default()` the snippet uses a temporary directory, and what an app would show is collected.
/// The AVFoundation calls around these snippets need Apple's SDK and are built by apple.yml.
@Suite(.timeLimit(.minutes(2))) struct DocSnippetTests {
    /// StreamCache.docc, GettingStarted.md.
    @Test func gettingStarted() async throws {
        let origin = try await TestOrigin()
        let bytes = TestData.bytes(count: 200_000, seed: 5)
        origin.setResource(bytes, at: "/ep.mp3")
        let episodeURL = origin.url("/ep.mp3")
        let directory = TestData.temporaryDirectory("snippets")
        defer { try? FileManager.default.removeItem(atPath: directory) }

        // 1. Open one engine for the process
        var configuration = CacheConfiguration()
        configuration.maxSize = 2 << 30
        let engine = try CacheEngine(
            directory: CacheDirectory(path: directory),
            origin: URLSessionOriginClient(),
            configuration: configuration
        )
        // 2. Read bytes
        let info = try await engine.contentInfo(episodeURL)
        var received = 0
        for try await chunk in try await engine.read(episodeURL, offset: 0, length: 64 << 10) {
            received += chunk.count
        }
        // 3. Before the process ends
        await engine.shutdown()

        #expect(info.length == Int64(bytes.count) && received == 64 << 10)
        await origin.shutdown()
    }

    /// StreamCacheOffline.docc, DownloadingForOfflinePlayback.md (start a download, after a
    /// relaunch, what a downloads list shows, playing a package), and the HLS and offline steps of
    /// UsingStreamCacheInAPodcastApp.md without AVPlayer.
    @Test func anHLSStreamThroughTheCacheAndOfflineWithTheOriginGone() async throws {
        let origin = try await TestOrigin()
        origin.setResource(
            Array("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000,CODECS=\"avc1.4d401f\"\nlow/index.m3u8\n".utf8),
            at: "/show/master.m3u8"
        )
        origin.setResource(
            Array("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\na.ts\n#EXTINF:2,\nb.ts\n#EXT-X-ENDLIST\n".utf8),
            at: "/show/low/index.m3u8"
        )
        origin.setResource(TestData.bytes(count: 40_000, seed: 1), at: "/show/low/a.ts")
        origin.setResource(TestData.bytes(count: 40_000, seed: 2), at: "/show/low/b.ts")
        let masterURL = origin.url("/show/master.m3u8")
        let directory = TestData.temporaryDirectory("snippets")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var shown: [String] = []
        func show(_ loaded: [ClosedRange<Double>], of expected: ClosedRange<Double>) { shown.append("\(loaded)") }
        var played: [String] = []
        func play(_ path: String) { played.append(path) }

        let engine = try CacheEngine(
            directory: CacheDirectory(path: directory + "/cache"),
            origin: URLSessionOriginClient()
        )
        let library = OfflineLibrary(directory: directory + "/library")
        let criteria = MediaSelectionCriteria(
            bitrate: .atMost(3_000_000),
            excludedCodecs: ["hvc1", "hev1"],
            videoRanges: .sdrOnly,
            audio: .default,
            subtitles: .none
        )
        var options = OfflineDownloadOptions()
        options.title = "Episode 12"
        var finishedID: String?
        for await event in library.download(masterURL, criteria: criteria, options: options, engine: engine) {
            switch event {
            case .selection(let chosen):
                print(chosen.variant as Any, chosen.audio, chosen.estimatedBytes as Any)
            case .progress(let progress):
                show(progress.loaded, of: progress.expected)
            case .recording(let recording):
                print(recording.seconds, "s recorded")
            case .mediaSelectionCompleted(let kind, let language):
                print(kind, language ?? "", "is on disk")
            case .finished(let id, let path):
                play(path)
                finishedID = id
            case .failed(let error):
                print(error.message)
            }
        }
        #expect(library.restorePendingDownloads(engine: engine).isEmpty)
        let id = try #require(finishedID)
        #expect(played.count == 1 && !shown.isEmpty && library.asset(id)?.title == "Episode 12")

        // Add a language to a package (this stream has none to add: the failure names what there is).
        var messages: [String] = []
        for await event in library.addMediaSelection(to: id, audio: .only(["de"]), subtitles: .all, engine: engine) {
            if case .failed(let error) = event { messages.append(error.message) }
        }
        #expect(messages.count == 1 && messages[0].contains("no audio"), "\(messages)")

        // Playing a package, and an HLS stream, through the in-app server.
        let server = InAppServer(engine: engine, offlineLibrary: library)
        try await server.start()
        let streamed = try await server.url(for: masterURL)
        #expect(try await Self.status(of: streamed) == 200)
        await origin.shutdown()
        let url = try await server.url(forOfflinePackage: id)
        #expect(try await Self.status(of: url) == 200, "the package does not play with the origin gone")
        await server.stop()
        await engine.shutdown()
    }

    private static func status(of url: URL) async throws -> Int {
        let (_, response) = try await URLSession.shared.data(from: url)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }
}
