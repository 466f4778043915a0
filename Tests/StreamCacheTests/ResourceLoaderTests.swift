import Foundation
import StreamCacheResourceLoader
import StreamCacheResourceLoaderTesting
import StreamCacheTesting
import Testing

@testable import StreamCache

/// The resource loader engine driven by the AVPlayer simulator against the conditioned origin.
@Suite(.timeLimit(.minutes(3))) struct ResourceLoaderTests {
    static let size = 8 << 20

    struct Setup {
        let fixture: EngineFixture
        let data: [UInt8]
        let url: URL

        init(
            conditions: OriginConditions = OriginConditions(bytesPerSecond: 64 << 20),
            type: String = "audio/mpeg"
        )
            async throws
        {
            fixture = try await EngineFixture.make(conditions: conditions)
            data = TestData.bytes(count: ResourceLoaderTests.size, seed: 90)
            fixture.origin.setResource(data, at: "/episode.mp3")
            url = fixture.origin.url("/episode.mp3")
        }

        func simulator() throws -> AVPlayerSimulator {
            AVPlayerSimulator(loader: ResourceLoaderEngine(engine: try fixture.engine()))
        }

        /// Every finished request got exactly the bytes of its range, in order, with no problems.
        func checkFinishedRequests(_ simulator: AVPlayerSimulator) {
            for request in simulator.requests {
                #expect(request.problems.isEmpty, "\(request.problems)")
                #expect(request.finishCount <= 1)
                guard request.finishCount == 1, request.error == nil, let dataRequest = request.dataRequest else {
                    continue
                }
                let start = Int(dataRequest.requestedOffset)
                let end =
                    dataRequest.requestsAllDataToEndOfResource
                    ? data.count : min(data.count, start + dataRequest.requestedLength)
                #expect(request.received == Array(data[start..<end]), "request at \(start) got wrong bytes")
            }
            for request in simulator.requests where request.isCancelled {
                // A cancelled request got a prefix of its range and was never finished.
                #expect(request.finishCount == 0)
                if let dataRequest = request.dataRequest {
                    let start = Int(dataRequest.requestedOffset)
                    #expect(request.received == Array(data[start..<start + request.received.count]))
                }
            }
        }
    }

    @Test func contentInformationComesFromABytes01FetchAndThenFromTheCache() async throws {
        let setup = try await Setup()
        let simulator = try setup.simulator()
        let open = try await simulator.openAsset(setup.url)
        let info = try #require(open.contentInformationRequest)
        #expect(info.contentType == "public.mp3")
        #expect(info.contentLength == Int64(Self.size))
        #expect(info.isByteRangeAccessSupported)
        #expect(open.received == Array(setup.data[0..<2]))
        #expect(setup.fixture.origin.statistics.requests.first?.range == "bytes=0-1")
        // Content information alone gets no data.
        let infoOnly = try await simulator.load(setup.url, contentInformation: true, data: nil)
        #expect(infoOnly.contentInformationRequest?.contentLength == Int64(Self.size))
        #expect(setup.fixture.origin.statistics.bodyBytes == 2)
        #expect(info.isEntireLengthAvailableOnDemand == false)
        // Once all of it is cached, AVPlayer is told it may read it as fast as it likes.
        try await simulator.load(setup.url, data: (0, nil))
        let again = try await simulator.openAsset(setup.url)
        #expect(again.contentInformationRequest?.isEntireLengthAvailableOnDemand == true)
        setup.checkFinishedRequests(simulator)
        await setup.fixture.tearDown()
    }

    @Test func eachLoadingRequestOpensTheResourceOnceAndAsksOnlyForMissingBytes() async throws {
        let setup = try await Setup()
        let engine = try setup.fixture.engine()
        let simulator = AVPlayerSimulator(loader: ResourceLoaderEngine(engine: engine))
        _ = try await simulator.openAsset(setup.url)
        try await simulator.load(setup.url, contentInformation: true, data: (0, 100_000))
        try await simulator.load(setup.url, data: (50_000, 100_000))
        try await simulator.load(setup.url, data: (1_000_000, 10_000))
        setup.checkFinishedRequests(simulator)
        #expect(await engine.opened == 4, "one open per loading request")
        // The 2 content bytes, then only what was missing: 2-99999, 100000-149999, the last range.
        let ranges = setup.fixture.origin.statistics.requests.map(\.range)
        #expect(ranges == ["bytes=0-1", "bytes=2-99999", "bytes=100000-149999", "bytes=1000000-1009999"])
        await setup.fixture.tearDown()
    }

    @Test func aPlaybackWithSeeksAndAnIndexAtTheEndFetchesEachByteOnce() async throws {
        let setup = try await Setup()
        let simulator = try setup.simulator()
        _ = try await simulator.openAsset(setup.url)
        // The player starts at 0, has enough after a while, and cancels.
        try await simulator.loadThenCancel(setup.url, from: 0, after: 300_000)
        // The MP4 index at the end, overlapping requests for it.
        let tail = Int64(Self.size - 200_000)
        async let index = simulator.load(setup.url, data: (tail, 200_000))
        async let overlap = simulator.load(setup.url, data: (tail + 50_000, 100_000))
        _ = try await (index, overlap)
        // Seeks: ranged requests, some over bytes already fetched.
        for offset in [4_000_000, 100_000, 6_500_000, 4_100_000] {
            try await simulator.load(setup.url, data: (Int64(offset), 500_000))
        }
        // Play to the end from the middle.
        try await simulator.load(setup.url, data: (Int64(Self.size / 2), nil))
        setup.checkFinishedRequests(simulator)
        let statistics = setup.fixture.origin.statistics
        // Bytes the origin had put into the socket when the first run stopped never reached it:
        // they are sent again, up to what loopback buffers hold, and nothing else is.
        #expect(
            statistics.duplicateBytes <= 1 << 20,
            "the origin sent \(statistics.duplicateBytes) bytes twice"
        )
        await setup.fixture.tearDown()
    }

    @Test func aStormOfCancelledRequestsLeavesNothingRunning() async throws {
        let setup = try await Setup(conditions: OriginConditions(bytesPerSecond: 4 << 20))
        let simulator = try setup.simulator()
        _ = try await simulator.openAsset(setup.url)
        simulator.cancellationStorm(setup.url, count: 100, length: 256 << 10, span: Self.size, step: 81_920)
        #expect(simulator.loader.activeLoads == 0, "loads are kept for cancelled requests")
        // Every origin fetch the storm started stops.
        var active = setup.fixture.origin.statistics.activeRequests
        for _ in 0..<200 where active > 0 {
            try await Task.sleep(for: .milliseconds(25))
            active = setup.fixture.origin.statistics.activeRequests
        }
        #expect(active == 0, "\(active) origin fetches still running after the storm")
        let sent = setup.fixture.origin.statistics.bodyBytes
        try await Task.sleep(for: .milliseconds(300))
        #expect(setup.fixture.origin.statistics.bodyBytes == sent)
        // The loader still works after the storm.
        let after = try await simulator.load(setup.url, data: (1000, 1000))
        #expect(after.received == Array(setup.data[1000..<2000]))
        setup.checkFinishedRequests(simulator)
        await setup.fixture.tearDown()
    }

    @Test func aRestartHalfwayFetchesOnlyTheRest() async throws {
        let setup = try await Setup()
        let first = try setup.simulator()
        _ = try await first.openAsset(setup.url)
        try await first.loadThenCancel(setup.url, from: 0, after: Self.size / 2)
        await first.loader.engine.shutdown()
        let sentBefore = setup.fixture.origin.statistics.bodyBytes
        #expect(sentBefore >= Int64(Self.size / 2))

        // New process state, same cache directory.
        let second = try setup.simulator()
        let open = try await second.openAsset(setup.url)
        #expect(open.contentInformationRequest?.contentLength == Int64(Self.size))
        try await second.load(setup.url, data: (0, nil))
        setup.checkFinishedRequests(second)
        let statistics = setup.fixture.origin.statistics
        // Bytes the origin had put into the socket when the first run stopped never reached it:
        // they are sent again, up to what loopback buffers hold, and nothing else is.
        #expect(
            statistics.duplicateBytes <= 1 << 20,
            "the origin sent \(statistics.duplicateBytes) bytes twice"
        )
        #expect(statistics.bodyBytes <= Int64(Self.size) + (1 << 20))
        await setup.fixture.tearDown()
    }

    @Test func throttledAndFaultyOriginsGiveRightBytesOrACleanError() async throws {
        for fault in [OriginFault.resetAfter(300_000), .shortBody, .ignoreRange, .wrongRangeStart, .status(503)] {
            var conditions = OriginConditions(bytesPerSecond: 32 << 20)
            conditions.faults = [fault]
            let setup = try await Setup(conditions: conditions)
            let simulator = try setup.simulator()
            _ = try? await simulator.openAsset(setup.url)
            _ = try? await simulator.load(setup.url, data: (1_000_000, 1_000_000))
            _ = try? await simulator.load(setup.url, data: (0, nil))
            setup.checkFinishedRequests(simulator)
            for request in simulator.requests {
                #expect(request.finishCount == 1, "\(fault): a request was not finished")
            }
            await setup.fixture.tearDown()
        }
    }

    @Test func badRequestsAreHandled() async throws {
        let setup = try await Setup()
        let simulator = try setup.simulator()
        let loader = simulator.loader
        // Not the custom scheme: declined.
        let plain = SimulatedLoadingRequest(url: setup.url, contentInformation: true, data: nil)
        #expect(!loader.shouldWaitForLoading(plain))
        let other = SimulatedLoadingRequest(
            url: URL(string: "streamcache-ftp://x/a")!,
            contentInformation: true,
            data: nil
        )
        #expect(!loader.shouldWaitForLoading(other))
        // Arrives already cancelled: declined, never finished.
        let late = SimulatedLoadingRequest(
            url: CustomSchemeURL.wrapping(setup.url)!,
            contentInformation: true,
            data: nil
        )
        late.markCancelled()
        #expect(!loader.shouldWaitForLoading(late))
        #expect(late.finishCount == 0)
        // Past the end: finished with an error, no data.
        let past = try await simulator.load(setup.url, data: (Int64(Self.size + 10), 100))
        #expect(past.error != nil && past.received.isEmpty)
        // An origin that fails the content-info request: finished with a clear error.
        let missing = try await simulator.openAsset(setup.fixture.origin.url("/missing.mp3"))
        let error = try #require(missing.error as? StreamCacheError)
        #expect(error.kind == .originStatus && error.status == 404)
        // A second cancel, or a cancel after the finish, changes nothing.
        loader.didCancel(missing)
        loader.didCancel(missing)
        #expect(missing.finishCount == 1)
        setup.checkFinishedRequests(simulator)
        await setup.fixture.tearDown()
    }

    @Test func customSchemeURLsRoundTrip() {
        let url = URL(string: "https://cdn.example.com/a%20b/ep.mp3?token=x&y=1#t")!
        let custom = CustomSchemeURL.wrapping(url)!
        #expect(custom.scheme == "streamcache-https")
        #expect(CustomSchemeURL.origin(of: custom) == url)
        #expect(CustomSchemeURL.wrapping(URL(string: "file:///etc/passwd")!) == nil)
        #expect(CustomSchemeURL.origin(of: url) == nil)
        #expect(UniformType.identifier(mimeType: "audio/mp4; codecs=mp4a", url: url) == "com.apple.m4a-audio")
        #expect(UniformType.identifier(mimeType: "application/octet-stream", url: url) == "public.mp3")
        // Nothing AVPlayer plays is `public.data`: an unknown type is unknown, and sniffed.
        #expect(UniformType.identifier(mimeType: nil, url: URL(string: "https://x/y")!) == nil)
        #expect(UniformType.identifier(mimeType: nil, url: URL(string: "https://x/book.m4b")!) == "public.mpeg-4-audio")
        #expect(UniformType.identifier(leadingBytes: Array("ID3\u{4}".utf8)) == "public.mp3")
        #expect(UniformType.identifier(leadingBytes: [0, 0, 0, 32] + Array("ftypM4B ".utf8)) == "com.apple.m4a-audio")
        #expect(UniformType.identifier(leadingBytes: [0, 0, 0, 32] + Array("ftypisom".utf8)) == "public.mpeg-4")
        #expect(UniformType.identifier(leadingBytes: [0xFF, 0xF1, 0x50]) == "public.aac-audio")
        #expect(UniformType.identifier(leadingBytes: [0xFF, 0xFB, 0x90]) == "public.mp3")
        #expect(UniformType.identifier(leadingBytes: Array("<html>".utf8)) == nil)
    }

    @Test func anUnknownLengthIsLearnedNeverReportedAsEmpty() async throws {
        var conditions = OriginConditions(bytesPerSecond: 64 << 20)
        conditions.faults = [.noLength]
        let setup = try await Setup(conditions: conditions)
        let simulator = try setup.simulator()
        let open = try await simulator.openAsset(setup.url)
        #expect(open.error == nil, "\(String(describing: open.error))")
        #expect(open.contentInformationRequest?.contentLength == Int64(Self.size))
        #expect(open.received == Array(setup.data[0..<2]))
        // Learning it cached the episode: it plays with each byte sent once.
        #expect(try await simulator.load(setup.url, data: (0, nil)).received == setup.data)
        #expect(setup.fixture.origin.statistics.bodyBytes == Int64(Self.size))
        await setup.fixture.tearDown()
    }

    @Test func rangesAreOfferedForAnOriginThatIgnoresThem() async throws {
        var conditions = OriginConditions(bytesPerSecond: 64 << 20)
        conditions.faults = [.ignoreRange]
        let setup = try await Setup(conditions: conditions)
        let simulator = try setup.simulator()
        let open = try await simulator.openAsset(setup.url)
        #expect(open.contentInformationRequest?.isByteRangeAccessSupported == true)
        let middle = try await simulator.load(setup.url, data: (3_000_000, 100_000))
        #expect(middle.received == Array(setup.data[3_000_000..<3_100_000]))
        await setup.fixture.tearDown()
    }

    @Test func aTypeNoOneTellsIsSniffedOrRefusedClearly() async throws {
        let setup = try await Setup()
        let simulator = try setup.simulator()
        // No extension, a generic type: the first bytes tell.
        setup.fixture.origin.setResource(Array("ID3\u{4}\u{0}".utf8) + setup.data.prefix(5000), at: "/episode")
        let sniffed = try await simulator.openAsset(setup.fixture.origin.url("/episode"))
        #expect(sniffed.contentInformationRequest?.contentType == "public.mp3")
        // Nothing tells: a clear error, not `public.data`, which AVPlayer would fail on later.
        setup.fixture.origin.setResource(Array("<html></html>".utf8), at: "/page")
        let unknown = try await simulator.openAsset(setup.fixture.origin.url("/page"))
        #expect(unknown.finishCount == 1 && "\(unknown.error.map { "\($0)" } ?? "")".contains("media type"))
        // A type the player does not allow here: an error, never the exception AVFoundation raises.
        let request = SimulatedLoadingRequest(
            url: CustomSchemeURL.wrapping(setup.url)!,
            contentInformation: true,
            data: nil
        )
        request.contentInformationRequest?.allowedContentTypes = ["public.mpeg-4"]
        #expect(simulator.loader.shouldWaitForLoading(request))
        for _ in 0..<500 where !request.isFinished { try await Task.sleep(for: .milliseconds(10)) }
        #expect(
            request.finishCount == 1 && request.error != nil && request.contentInformationRequest?.contentType == nil
        )
        await setup.fixture.tearDown()
    }

    @Test func delegateCallsOnAnotherQueueAreCarriedOutOnTheLoaderQueue() async throws {
        let setup = try await Setup()
        let simulator = try setup.simulator()
        _ = try await simulator.openAsset(setup.url)
        // An app that gave `setDelegate` its own queue: every call arrives there.
        let appQueue = DispatchQueue(label: "app's resource loader queue")
        let url = setup.url
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            appQueue.async {
                simulator.cancellationStorm(
                    url,
                    count: 200,
                    length: 64 << 10,
                    span: ResourceLoaderTests.size,
                    step: 40_000
                )
                done.resume()
            }
        }
        for _ in 0..<500 where simulator.loader.activeLoads > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(simulator.loader.activeLoads == 0)
        for request in simulator.requests where request.isCancelled {
            #expect(request.finishCount == 0, "a cancelled request was finished")
        }
        setup.checkFinishedRequests(simulator)
        await setup.fixture.tearDown()
    }
}
