import Foundation
import StreamCache
import StreamCacheHTTP
import StreamCacheTesting
import StreamCacheURLSession
import Testing

/// The contract every ``OriginClient`` keeps, run against both implementations.
@Suite(.timeLimit(.minutes(2))) struct OriginClientContractTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case asyncHTTPClient, urlSession
        var testDescription: String { rawValue }
    }

    private func withClient(_ kind: Kind, _ body: (any OriginClient) async throws -> Void) async throws {
        switch kind {
        case .asyncHTTPClient:
            let client = HTTPOriginClient()
            do {
                try await body(client)
            } catch {
                try await client.shutdown()
                throw error
            }
            try await client.shutdown()
        case .urlSession:
            try await body(URLSessionOriginClient())
        }
    }

    private func collect(
        _ client: any OriginClient,
        _ request: OriginRequest
    ) async throws -> (OriginResponseHead, [UInt8]) {
        try await client.fetch(request) { head, body in
            var bytes: [UInt8] = []
            for try await chunk in body { bytes += chunk }
            return (head, bytes)
        }
    }

    /// An owner that fails before it shuts its client down (a test that throws, an app that
    /// drops its engine) loses nothing but the connections: the process goes on.
    @Test func aClientDroppedWithoutShutdownClosesItself() async throws {
        let origin = try await TestOrigin()
        defer { Task { await origin.shutdown() } }
        origin.setResource(TestData.bytes(count: 1000, seed: 7), at: "/a.bin")
        var client: HTTPOriginClient? = HTTPOriginClient()
        let (head, _) = try await collect(client!, OriginRequest(url: origin.url("/a.bin")))
        #expect(head.status == 200)
        client = nil
        // Had the drop stopped the process, nothing after it would run.
        try await Task.sleep(for: .milliseconds(200))
        #expect(client == nil)
    }

    /// Many bodies received at once, each faster than its reader takes it, share the client's
    /// queue budget: after readers that gave up mid-body, every one still arrives whole and none
    /// waits on another's reader.
    @Test func manyBodiesAtOnceAllArriveWholeAfterReadersThatGaveUp() async throws {
        let origin = try await TestOrigin()
        defer { Task { await origin.shutdown() } }
        let data = TestData.bytes(count: 3 << 20, seed: 41)
        for index in 0..<24 { origin.setResource(data, at: "/\(index).bin") }
        let client = HTTPOriginClient()
        // Half give up after their first run, holding whatever was queued for them.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<12 {
                group.addTask {
                    try await client.fetch(OriginRequest(url: origin.url("/\(index).bin"))) { _, body in
                        for try await _ in body { break }
                    }
                }
            }
            try await group.waitForAll()
        }
        let sums = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<24 {
                group.addTask {
                    try await client.fetch(OriginRequest(url: origin.url("/\(index).bin"))) { _, body in
                        var bytes: [UInt8] = []
                        for try await chunk in body {
                            bytes += chunk
                            // A reader slower than the origin: the queues fill.
                            try await Task.sleep(for: .milliseconds(5))
                        }
                        return bytes == data
                    }
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        try await client.shutdown()
        #expect(sums.count == 24 && sums.allSatisfy { $0 })
    }

    @Test(arguments: Kind.allCases)
    func fetchesRangesWithHeaders(kind: Kind) async throws {
        let origin = try await TestOrigin()
        defer { Task { await origin.shutdown() } }
        let data = TestData.bytes(count: 300_000, seed: 1)
        origin.setResource(data, at: "/ep.mp3")
        try await withClient(kind) { client in
            let (head, bytes) = try await collect(
                client,
                OriginRequest(url: origin.url("/ep.mp3"), range: (1000, 1999))
            )
            #expect(head.status == 206)
            #expect(head["content-range"] == "bytes 1000-1999/300000")
            #expect(head["Content-Type"] == "audio/mpeg")
            #expect(head["ETag"] != nil)
            #expect(bytes == Array(data[1000..<2000]))
            let (whole, all) = try await collect(client, OriginRequest(url: origin.url("/ep.mp3")))
            #expect(whole.status == 200)
            #expect(all == data)
        }
    }

    @Test(arguments: Kind.allCases)
    func handsBackARedirectWithoutFollowingIt(kind: Kind) async throws {
        let origin = try await TestOrigin()
        defer { Task { await origin.shutdown() } }
        origin.setResource(TestData.bytes(count: 1000, seed: 2), at: "/real.mp3")
        origin.setRedirect("/short", to: "/real.mp3", status: 307)
        try await withClient(kind) { client in
            let (head, _) = try await collect(client, OriginRequest(url: origin.url("/short"), range: (0, 9)))
            #expect(head.status == 307)
            #expect(head["Location"] == "/real.mp3")
            // The engine decides whether to follow it; the client sent nothing to the target. (The
            // origin counts a request once it has answered it: a busy run may see it a moment later.)
            for _ in 0..<100 where origin.statistics.requests.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            #expect(origin.statistics.requests.map(\.path) == ["/short"])
        }
    }

    @Test(arguments: Kind.allCases)
    func stopsTheTransferWhenTheHandlerReturnsEarly(kind: Kind) async throws {
        let origin = try await TestOrigin(conditions: OriginConditions(bytesPerSecond: 1 << 20))
        defer { Task { await origin.shutdown() } }
        origin.setResource(TestData.bytes(count: 16 << 20, seed: 3), at: "/big.bin")
        try await withClient(kind) { client in
            let got = try await client.fetch(OriginRequest(url: origin.url("/big.bin"))) { _, body in
                var count = 0
                for try await chunk in body {
                    count += chunk.count
                    if count >= 256 << 10 { break }
                }
                return count
            }
            #expect(got >= 256 << 10)
            // 16 MiB at 1 MiB/s would take 16 s. The transfer stops long before, with the client
            // still open: what it had read ahead and the sockets held is sent, then nothing more
            // (a full test run on two cores takes up to 6 s to cancel a transfer).
            var active = origin.statistics.activeRequests
            for _ in 0..<50 where active > 0 {
                try await Task.sleep(for: .milliseconds(100))
                active = origin.statistics.activeRequests
            }
            #expect(active == 0, "the origin is still sending")
            #expect(origin.statistics.bodyBytes < 12 << 20)
        }
    }

    @Test(arguments: Kind.allCases)
    func reportsAnUnreachableOriginAsOneClearError(kind: Kind) async throws {
        let refusing = try RefusingPort()
        let url = try #require(URL(string: refusing.url("gone.mp3")))
        try await withClient(kind) { client in
            do {
                _ = try await collect(client, OriginRequest(url: url, range: (0, 1)))
                Issue.record("fetch from a closed port succeeded")
            } catch let error as StreamCacheError {
                #expect(error.kind == .originUnreachable)
                #expect(!error.message.contains("\n"))
            }
        }
    }
}
