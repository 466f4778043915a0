import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import StreamCache
import StreamCacheHTTP
import StreamCacheTesting
import Testing

@testable import StreamCacheServer

/// The handler that drives a proxy connection, on a testing channel: the real engine and cache
/// files behind it, a responder that answers with the path it was asked for.
@Suite struct ProxyConnectionHandlerTests {
    static let local = try! SocketAddress(ipAddress: "127.0.0.1", port: 8080)

    /// A connection to a proxy whose cache holds `/ep.mp3` of a test origin.
    final class Connection: Sendable {
        let origin: TestOrigin
        let client = HTTPOriginClient()
        let directory = CacheDirectory(path: TestData.temporaryDirectory("connection"))
        let engine: CacheEngine
        let data = TestData.bytes(count: 300_000, seed: 52)
        let channel: NIOAsyncTestingChannel
        /// The requests the responder was asked, in order, with their verdicts.
        let asked = Locked<[(path: String, verdict: ProxyRequest.Verdict)]>([])
        /// Whether a responder answer saw its task cancelled.
        let cancelled = Locked(false)

        init(idleTimeout: Duration = .seconds(30), responderWaits: Bool = false) async throws {
            origin = try await TestOrigin()
            origin.setResource(data, at: "/ep.mp3")
            engine = try CacheEngine(directory: directory, origin: client)
            var read = 0
            for try await chunk in try await engine.read(origin.url("/ep.mp3"), offset: 0, length: nil) {
                read += chunk.count
            }
            #expect(read == data.count)
            let (asked, cancelled, engine) = (asked, cancelled, engine)
            let logs = try ProxyLogs(accessLogPath: nil, errorLogPath: nil, logger: Logger(label: "test"))
            let channel = NIOAsyncTestingChannel()
            self.channel = channel
            channel.localAddress = ProxyConnectionHandlerTests.local
            try await channel.testingEventLoop.executeInContext {
                let handler = ProxyConnectionHandler(
                    idleTimeout: idleTimeout,
                    admission: RequestAdmission(
                        authority: ListenerAuthority(boundHost: "127.0.0.1"),
                        webPages: WebPagePolicy(allowedOrigins: []),
                        accessKey: nil,
                        local: ProxyConnectionHandlerTests.local
                    ),
                    hits: CacheHits(engine: engine, originHeaders: OriginHeaders()),
                    logs: logs,
                    connections: OpenConnections()
                ) { request, verdict, _, _ in
                    asked.withLock { $0.append((request.path ?? "", verdict)) }
                    if responderWaits {
                        try? await Task.sleep(for: .seconds(60))
                        if Task.isCancelled { cancelled.withLock { $0 = true } }
                    }
                    let body = "answer to \(request.path ?? "")"
                    return ProxyResponse(status: .ok, body: .bytes(ByteBuffer(string: body)))
                }
                try ProxyPipeline.setUp(channel, connection: handler)
            }
            try await channel.connect(to: ProxyConnectionHandlerTests.local).get()
        }

        func tearDown() async {
            _ = try? await channel.finish()
            await engine.shutdown()
            try? await client.shutdown()
            await origin.shutdown()
            try? FileManager.default.removeItem(atPath: directory.path)
        }

        var episode: String { "/" + origin.url("/ep.mp3").absoluteString }

        func send(_ text: String) async throws {
            try await channel.writeInbound(ByteBuffer(string: text))
        }

        /// The bytes written to the client until they hold `count` answers' ends (each answer
        /// ends its body with a known text, or is `count` of the cache's bytes).
        func written(until done: @escaping ([UInt8]) -> Bool) async throws -> [UInt8] {
            var bytes: [UInt8] = []
            let deadline = ContinuousClock.now + .seconds(10)
            while !done(bytes) {
                guard ContinuousClock.now < deadline else { break }
                guard let data = try await channel.readOutbound(as: IOData.self) else {
                    try await Task.sleep(for: .milliseconds(5))
                    continue
                }
                switch data {
                case .byteBuffer(let buffer): bytes += buffer.readableBytesView
                case .fileRegion(let region):
                    try region.fileHandle.withUnsafeFileDescriptor { descriptor in
                        var chunk = [UInt8](repeating: 0, count: region.readableBytes)
                        let read = pread(descriptor, &chunk, chunk.count, off_t(region.readerIndex))
                        bytes += chunk.prefix(max(0, read))
                    }
                }
            }
            return bytes
        }

        var httpHandlersAdded: Bool {
            get async { (try? await channel.pipeline.handler(type: HTTPResponseEncoder.self).get()) != nil }
        }
    }

    @Test func aWholeHeadForCachedBytesIsAnsweredFromTheFileWithoutTheHTTPHandlers() async throws {
        let connection = try await Connection()
        defer { Task { await connection.tearDown() } }
        try await connection.send(
            "GET \(connection.episode) HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nRange: bytes=100-199\r\n\r\n"
        )
        let bytes = try await connection.written {
            $0.count >= 100 && String(decoding: $0, as: UTF8.self).contains("\r\n\r\n")
        }
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 206 Partial Content\r\n"))
        #expect(text.contains("Content-Range: bytes 100-199/300000"))
        #expect(Array(bytes.suffix(100)) == Array(connection.data[100..<200]))
        #expect(connection.asked.withLock { $0.isEmpty })
        #expect(await !connection.httpHandlersAdded)
        #expect(connection.channel.isActive)
    }

    /// A cache hit pipelined behind a request the responder answers waits its turn: answers go
    /// out in the order of the requests.
    @Test func pipelinedRequestsAreAnsweredInTheirOrder() async throws {
        let connection = try await Connection()
        defer { Task { await connection.tearDown() } }
        let host = "Host: 127.0.0.1:8080\r\n"
        let other = "/" + connection.origin.url("/other.mp3").absoluteString
        try await connection.send(
            "GET \(other) HTTP/1.1\r\n\(host)\r\n"
                + "GET \(connection.episode) HTTP/1.1\r\n\(host)Range: bytes=0-9\r\n\r\n"
                + "HEAD \(other) HTTP/1.1\r\n\(host)\r\n"
        )
        let bytes = try await connection.written {
            String(decoding: $0, as: UTF8.self).components(separatedBy: "HTTP/1.1 ").count > 3
        }
        let answers = String(decoding: bytes, as: UTF8.self).components(separatedBy: "HTTP/1.1 ").dropFirst()
        #expect(answers.count == 3)
        #expect(connection.asked.withLock { $0.map(\.path) } == [other, connection.episode, other])
        #expect(answers.allSatisfy { $0.hasPrefix("200 OK") })
        #expect(answers.dropFirst().first?.hasSuffix("answer to \(connection.episode)") == true)
    }

    @Test func aHeadTheDecoderCannotParseGets400AndTheConnectionCloses() async throws {
        let connection = try await Connection()
        defer { Task { await connection.tearDown() } }
        try await connection.send("GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nno colon here\r\n\r\n")
        let bytes = try await connection.written { String(decoding: $0, as: UTF8.self).contains("\r\n\r\n") }
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("HTTP/1.1 400 Bad Request"))
        try await connection.channel.closeFuture.get()
        #expect(connection.asked.withLock { $0.isEmpty })
    }

    @Test func aRefusedHeadReachesTheResponderTypedAndClosesTheConnection() async throws {
        let connection = try await Connection()
        defer { Task { await connection.tearDown() } }
        try await connection.send(
            "GET \(connection.episode) HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nHost: evil.example\r\n\r\n"
        )
        let bytes = try await connection.written { String(decoding: $0, as: UTF8.self).contains("answer to") }
        #expect(String(decoding: bytes, as: UTF8.self).contains("Connection: close"))
        try await connection.channel.closeFuture.get()
        let verdicts = connection.asked.withLock { $0.map(\.verdict) }
        #expect(verdicts == [.refuse(ProxyRefusal(.badRequest, "the request has 2 Host headers"))])
    }

    @Test func anHTTP10RequestGetsItsAnswerThenTheClose() async throws {
        let connection = try await Connection()
        defer { Task { await connection.tearDown() } }
        try await connection.send(
            "GET \(connection.episode) HTTP/1.0\r\nHost: 127.0.0.1:8080\r\nRange: bytes=0-9\r\n\r\n"
        )
        let bytes = try await connection.written {
            $0.count > 10 && String(decoding: $0, as: UTF8.self).contains("\r\n\r\n")
        }
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.0 206") && text.contains("Connection: close"))
        try await connection.channel.closeFuture.get()
    }

    @Test func aHangUpCancelsTheResponder() async throws {
        let connection = try await Connection(responderWaits: true)
        defer { Task { await connection.tearDown() } }
        let other = "/" + connection.origin.url("/other.mp3").absoluteString
        try await connection.send("GET \(other) HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n")
        while connection.asked.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(5)) }
        try await connection.channel.close()
        let deadline = ContinuousClock.now + .seconds(10)
        while !connection.cancelled.withLock({ $0 }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(connection.cancelled.withLock { $0 })
    }

    @Test func anIdleConnectionClosesAfterTheTimeoutAndABusyOneDoesNot() async throws {
        let connection = try await Connection(idleTimeout: .seconds(30), responderWaits: true)
        defer { Task { await connection.tearDown() } }
        await connection.channel.testingEventLoop.advanceTime(by: .seconds(29))
        #expect(connection.channel.isActive)
        let other = "/" + connection.origin.url("/other.mp3").absoluteString
        try await connection.send("GET \(other) HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n")
        // The answer is owed: the client waits, however long.
        await connection.channel.testingEventLoop.advanceTime(by: .seconds(120))
        #expect(connection.channel.isActive)

        let idle = try await Connection(idleTimeout: .seconds(30))
        defer { Task { await idle.tearDown() } }
        await idle.channel.testingEventLoop.advanceTime(by: .seconds(31))
        try await idle.channel.closeFuture.get()
    }
}
