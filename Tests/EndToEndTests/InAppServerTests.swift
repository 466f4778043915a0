import Foundation
import StreamCache
import StreamCacheHTTP
import StreamCacheOffline
import StreamCacheResourceLoader
import StreamCacheResourceLoaderTesting
import StreamCacheTesting
import Testing

@testable import StreamCacheServer

/// The in-app server and the routing of `StreamCacheAssets`, in this process as an app has them:
/// HLS played as AVPlayer plays it (``HLSPlayerSimulator``) and by ffmpeg, against streams made
/// by ffmpeg on `streamcache origin`; offline packages with the origin stopped; the access key.
@Suite(.timeLimit(.minutes(5))) struct InAppServerTests {
    /// An engine and its in-app server over a fresh cache, with an origin serving a folder.
    struct App {
        let workspace = Workspace()
        let origin: OriginProcess
        let client = HTTPOriginClient()
        let engine: CacheEngine
        let server: InAppServer
        let library: OfflineLibrary

        init(_ kind: TestStreams.Kind) async throws {
            try await TestStreams.make(kind, in: workspace.originDirectory)
            origin = try await OriginProcess(directory: workspace.originDirectory)
            engine = try CacheEngine(directory: CacheDirectory(path: workspace.cacheDirectory), origin: client)
            library = OfflineLibrary(directory: workspace.outputDirectory + "/library")
            server = InAppServer(engine: engine, offlineLibrary: library)
        }

        func originURL(_ name: String) -> URL { URL(string: origin.url(name))! }

        /// The origin file a URL of the server stands for: `/<key>/http://127.0.0.1:PORT/<name>`.
        func originFile(of url: URL, key: String) -> String? {
            let prefix = "/\(key)/" + origin.url("")
            guard url.path.isEmpty == false, let range = url.absoluteString.range(of: prefix) else { return nil }
            return workspace.originDirectory + "/" + url.absoluteString[range.upperBound...]
        }

        func close() async throws {
            await server.stop()
            await engine.shutdown()
            try await client.shutdown()
            workspace.remove()
        }
    }

    @Test func hlsPlaysThroughTheServerByteForByteWithASeekAndAVariantSwitchAndEachByteOnce() async throws {
        let app = try await App(.variants)
        await #expect(throws: InAppServerNotStarted.self) {
            try await app.server.url(for: app.originURL(TestStreams.Kind.variants.playlist))
        }
        let router = PlaybackRouter(server: app.server)
        guard case .server(let url) = try await router.route(app.originURL(TestStreams.Kind.variants.playlist)) else {
            Issue.record("an .m3u8 URL is not routed to the in-app server")
            return try await app.close()
        }
        #expect(
            url.absoluteString.hasPrefix(
                "http://127.0.0.1:\(try #require(await app.server.port))/\(app.server.accessKey)/"
            )
        )

        let player = HLSPlayerSimulator()
        let played =
            try await player.play(url, variant: 0, segments: 0..<2)  // start
            + player.play(url, variant: 0, segments: 2..<3)  // a seek ahead
            + player.play(url, variant: 1, segments: 1..<3)  // a switch to the smaller variant
        var segments = 0
        for fetch in played {
            // Every URI a rewritten playlist names keeps the key, so AVPlayer can follow it.
            #expect(fetch.url.path.hasPrefix("/\(app.server.accessKey)/"), "\(fetch.url)")
            guard !fetch.url.path.hasSuffix(".m3u8") else { continue }
            let file = try #require(app.originFile(of: fetch.url, key: app.server.accessKey))
            var expected = try #require(app.workspace.read(file))
            if let range = fetch.range {
                expected = Array(expected[Int(range.offset)..<Int(range.offset + range.length)])
            }
            #expect(
                fetch.bytes == expected,
                "\(fetch.url): \(fetch.bytes.count) bytes, the origin has \(expected.count)"
            )
            segments += 1
        }
        #expect(segments >= 10, "\(played.map(\.url))")

        // ffmpeg decodes the same frames through the server as from the origin's files.
        let origin = try await TestStreams.frames(
            app.workspace.originDirectory + "/" + TestStreams.Kind.variants.playlist
        )
        let through = try await TestStreams.frames(url.absoluteString)
        #expect(through.count > 10 && through == origin, "\(through.count) frames through the server, \(origin.count)")
        let stats = try await app.origin.settledStats()
        #expect(stats.duplicateBytes == 0, "the origin sent \(stats.duplicateBytes) bytes twice")
        try await app.close()
    }

    @Test func aRequestWithoutTheKeyIsRefused() async throws {
        let app = try await App(.ts)
        try await app.server.start()
        let port = try #require(await app.server.port)
        let origin = app.origin.url(TestStreams.Kind.ts.playlist)
        let keyed = try await app.server.url(for: URL(string: origin)!)
        #expect(try await Curl.fetch(keyed.absoluteString).status == 200)
        for path in [origin, "0123456789abcdef0123456789abcdef/" + origin, "offline/x/master.m3u8", ""] {
            let reply = try await Curl.fetch("http://127.0.0.1:\(port)/" + path)
            #expect(reply.status == 403, "/\(path): \(reply.status)")
        }
        // Nor a segment the cache holds, which the event loop answers before the HTTP decoder.
        let segment = try await app.server.url(for: app.originURL("ts/index0.ts")).absoluteString
        #expect(try await Curl.fetch(segment).status == 200)
        let warm = try await Curl.fetch(segment, headers: ["Range: bytes=0-99"])
        #expect(warm.status == 206 && warm.body.count == 100)
        let bare = "http://127.0.0.1:\(port)/" + app.origin.url("ts/index0.ts")
        #expect(try await Curl.fetch(bare, headers: ["Range: bytes=0-99"]).status == 403)
        // Another app guessing the key gets nothing either: the key is new at each launch.
        let other = InAppServer(engine: app.engine)
        #expect(other.accessKey != app.server.accessKey && other.accessKey.count == 32)
        try await app.close()
    }

    @Test func theServerListensAgainOnItsPortAfterTheSystemClosesItsListener() async throws {
        let app = try await App(.ts)
        try await app.server.start()
        let port = try #require(await app.server.port)
        let url = try await app.server.url(for: app.originURL(TestStreams.Kind.ts.playlist))
        #expect(try await Curl.fetch(url.absoluteString).status == 200)

        // As iOS does to a suspended app, then the app comes back to the foreground.
        await app.server.closeListenerAsTheSystemWould()
        NotificationCenter.default.post(
            name: Notification.Name("UIApplicationWillEnterForegroundNotification"),
            object: nil
        )
        var status = 0
        for _ in 0..<50 {
            status = (try? await Curl.fetch(url.absoluteString))?.status ?? 0
            if status == 200 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(status == 200, "the URL given before the suspension answers \(status)")
        #expect(await app.server.port == port)
        await app.server.resumeIfNeeded()
        #expect(try await Curl.fetch(url.absoluteString).status == 200)

        await app.server.stop()
        #expect((try? await Curl.fetch(url.absoluteString)) == nil, "a stopped server still answers")
        try await app.server.start()
        #expect(try await Curl.fetch(url.absoluteString).status == 200, "a restarted server forgot its URLs")
        try await app.close()
    }

    @Test func anOfflinePackagePlaysThroughTheServerWithTheOriginStopped() async throws {
        let app = try await App(.ts)
        let playlist = app.originURL(TestStreams.Kind.ts.playlist)
        let original = try await TestStreams.frames(app.workspace.originDirectory + "/" + TestStreams.Kind.ts.playlist)
        var id: String?
        for await event in app.library.download(playlist, engine: app.engine) {
            if case .finished(let finished, _) = event { id = finished }
            if case .failed(let error) = event { Issue.record("the download failed: \(error)") }
        }
        let package = try #require(id)
        try await app.origin.stop()

        let router = PlaybackRouter(server: app.server)
        guard case .server(let url) = try await router.route(offlinePackage: package) else {
            Issue.record("an offline package is not routed to the in-app server")
            return try await app.close()
        }
        let offline = try await TestStreams.frames(url.absoluteString)
        #expect(offline.count > 10 && offline == original, "\(offline.count) frames offline, \(original.count) online")
        try await app.close()
    }

    @Test func progressiveMediaGoesThroughTheResourceLoaderAndPlaylistsThroughTheServer() async throws {
        let app = try await App(.ts)
        let episode = TestData.bytes(count: 300_000, seed: 7)
        try app.workspace.write(episode, as: "ep.mp3")
        try app.workspace.write(
            [UInt8](
                try #require(app.workspace.read(app.workspace.originDirectory + "/" + TestStreams.Kind.ts.playlist))
            ),
            as: "feed-item"
        )
        let router = PlaybackRouter(server: app.server)

        let mp3 = app.originURL("ep.mp3")
        #expect(try await router.route(mp3) == .resourceLoader(mp3))
        let file = URL(fileURLWithPath: "/tmp/ep.mp3")
        #expect(try await router.route(file) == .direct(file))
        #expect(await app.server.port == nil, "the server started for progressive media")
        // A playlist whose URL does not say so: by the type the app's feed gives.
        let item = app.originURL("feed-item")
        guard case .server = try await router.route(item, contentType: "application/vnd.apple.mpegurl") else {
            Issue.record("a playlist typed by the app is not routed to the server")
            return try await app.close()
        }

        // The progressive route plays through the resource loader as AVPlayer drives it.
        let simulator = AVPlayerSimulator(loader: ResourceLoaderEngine(engine: app.engine))
        let opened = try await simulator.openAsset(mp3)
        let info = try #require(opened.contentInformationRequest)
        #expect(info.contentLength == Int64(episode.count) && info.isByteRangeAccessSupported)
        #expect(try await simulator.load(mp3, data: (0, nil)).received == episode)
        try await app.close()
    }

    @Test func anAppRestoresUnfinishedDownloadsAndKeepsATitleAndArtworkWithEachPackage() async throws {
        let app = try await App(.ts)
        let playlist = app.originURL(TestStreams.Kind.ts.playlist)
        var options = OfflineDownloadOptions()
        options.title = "Episode 12"
        options.artwork = Data([0x89, 0x50, 0x4E, 0x47, 1, 2, 3])
        options.jobs = 1
        // The app is suspended mid-download: iteration stops after the first file.
        var files = 0
        for await event in app.library.download(playlist, options: options, engine: app.engine) {
            if case .progress(let progress) = event, progress.filesDone > 0 {
                files = progress.filesDone
                break
            }
        }
        #expect(files > 0)
        var paused = try #require(app.library.assets().first)
        for _ in 0..<100 where paused.state == .downloading {
            // The stopped download lets go of its package as its task ends.
            try await Task.sleep(for: .milliseconds(50))
            paused = try #require(app.library.asset(paused.id))
        }
        #expect(paused.state == .incomplete && paused.title == "Episode 12")
        #expect(paused.artworkPath.flatMap { FileManager.default.contents(atPath: $0) } == options.artwork)

        // At the next launch the app restores it, with what it got so far.
        var restored = app.library.restorePendingDownloads(engine: app.engine)
        #expect(restored.map(\.id) == [paused.id])
        var finished = false
        for await event in restored.removeFirst().events {
            if case .finished = event { finished = true }
        }
        #expect(finished)
        let done = try #require(app.library.asset(paused.id))
        #expect(done.state == .complete && done.title == "Episode 12")
        #expect(app.library.restorePendingDownloads(engine: app.engine).isEmpty)

        try app.library.describe(paused.id, title: "Episode 12: the sequel", artwork: nil)
        #expect(app.library.asset(paused.id)?.title == "Episode 12: the sequel")
        #expect(throws: OfflineError.self) { try app.library.describe("nope", title: "x", artwork: nil) }
        try await app.close()
    }

    @Test func anotherLanguageAndSubtitlesAreAddedToAPackageWithoutFetchingItsFilesAgain() async throws {
        let app = try await App(.multi)
        let master = app.originURL(TestStreams.Kind.multi.playlist)
        let english = MediaSelectionCriteria(audio: .only(["en"]), subtitles: .none)
        var id: String?
        for await event in app.library.download(master, criteria: english, engine: app.engine) {
            if case .finished(let finished, _) = event { id = finished }
            if case .failed(let error) = event { Issue.record("the download failed: \(error)") }
        }
        let package = try #require(id)
        let before = try #require(app.library.asset(package))
        #expect(before.audio == ["en"] && before.subtitles.isEmpty)
        let folder = (before.path as NSString).deletingLastPathComponent
        let held = try FolderListing.modificationTimes(in: folder)

        var selection: DownloadSelection?
        var finished = false
        let added = app.library.addMediaSelection(
            to: package,
            audio: .only(["de"]),
            subtitles: .all,
            engine: app.engine
        )
        for await event in added {
            if case .selection(let chosen) = event { selection = chosen }
            if case .finished(let finished_, _) = event { finished = finished_ == package }
            if case .failed(let error) = event { Issue.record("adding failed: \(error)") }
        }
        #expect(finished)
        let after = try #require(app.library.asset(package))
        #expect(after.state == .complete && after.audio == ["en", "de"] && after.subtitles.count == 1)
        // Every file the package held counted as done, and none was written again.
        let files = try FolderListing.modificationTimes(in: folder)
        #expect(selection?.filesDone == held.filter { $0.key.hasSuffix(".ts") || $0.key.hasSuffix(".vtt") }.count)
        for (path, modified) in held where !path.hasSuffix(".m3u8") && !path.hasSuffix(".json") {
            #expect(files[path] == modified, "\(path) was written again")
        }
        #expect(files.keys.contains { $0.hasPrefix("audio-de/") } && files.keys.contains { $0.hasPrefix("subtitles") })
        // The added language decodes from disk to the origin's frames.
        let german = try #require(
            try String(contentsOfFile: folder + "/master.m3u8", encoding: .utf8)
                .split(separator: "\n").first { $0.contains("LANGUAGE=\"de\"") && $0.contains("TYPE=AUDIO") }
        )
        #expect(german.contains("URI=\"audio-de/index.m3u8\""))
        #expect(try await TestStreams.frames(folder + "/audio-de/index.m3u8").count > 10)
        // What the origin does not have is a clear failure.
        var failure: OfflineError?
        for await event in app.library.addMediaSelection(to: package, audio: .only(["fr"]), engine: app.engine) {
            if case .failed(let error) = event { failure = error }
        }
        #expect(failure?.kind == .noMatchingRendition && failure?.message.contains("de") == true)
        try await app.close()
    }

    @Test func byteRangeSegmentsPlayFromAnOriginThatIgnoresRangeEachByteFetchedOnce() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        try await TestStreams.make(.single, in: workspace.originDirectory)
        // python3 -m http.server answers every request with the whole file.
        let origin = try await PythonOrigin(directory: workspace.originDirectory)
        defer { origin.stop() }
        let client = HTTPOriginClient()
        let engine = try CacheEngine(directory: CacheDirectory(path: workspace.cacheDirectory), origin: client)
        let server = InAppServer(engine: engine)
        try await server.start()
        let url = try await server.url(for: URL(string: origin.url(TestStreams.Kind.single.playlist))!)

        // AVPlayer's requests: the playlist, then each segment as a Range of the one file.
        let played = try await HLSPlayerSimulator().play(url, variant: 0, segments: 0..<3)
        let ranged = played.filter { $0.range != nil }
        #expect(ranged.count >= 3, "\(played.map(\.url))")
        for fetch in ranged {
            let name = String(fetch.url.path.split(separator: "/").suffix(2).joined(separator: "/"))
            let file = try #require(workspace.read(workspace.originDirectory + "/" + name))
            let range = try #require(fetch.range)
            #expect(
                fetch.bytes == Array(file[Int(range.offset)..<Int(range.offset + range.length)]),
                "\(name) \(range)"
            )
        }
        // ffmpeg through the server decodes what it decodes from the files.
        let frames = try await TestStreams.frames(url.absoluteString)
        let original = try await TestStreams.frames(workspace.originDirectory + "/" + TestStreams.Kind.single.playlist)
        #expect(frames.count > 10 && frames == original, "\(frames.count) frames, \(original.count) from disk")
        // The media file went over the wire once, whatever the ranges asked: one 200, then
        // conditional requests only (the file is new, so stale at once: RFC 9111 §4.2.2), each a
        // 304 without a body.
        let media = origin.requests().filter { !$0.contains(".m3u8") }
        #expect(media.filter { $0.hasSuffix(" 200 -") }.count == 1, "\(media)")
        #expect(media.dropFirst().allSatisfy { $0.hasSuffix(" 304 -") }, "\(media)")

        await server.stop()
        await engine.shutdown()
        try await client.shutdown()
    }
}
