import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import StreamCacheServer

/// A proxy connection's handler on a testing channel with no engine, no cache and no origin: cache
/// hits that always say no, and a responder that answers with the path it was asked. What the
/// connection does with requests, answers and a graceful stop is the handler's and machine's alone.
@Suite struct ConnectionWithoutEngineTests {
    static let local = try! SocketAddress(ipAddress: "127.0.0.1", port: 8080)

    /// Cache hits that never answer: every request goes to the responder.
    struct NoCacheHits: CacheHitAnswering {
        func answer(
            _ request: ProxyRequest,
            framing: ResponseFraming,
            target: inout CacheHits.Target?,
            allocator: ByteBufferAllocator
        ) -> CacheHits.Answer? { nil }
    }

    /// A connected testing channel with the handler in its pipeline.
    static func connection(answeringAfter delay: Duration = .zero) async throws -> NIOAsyncTestingChannel {
        let channel = NIOAsyncTestingChannel()
        channel.localAddress = local
        let logs = try ProxyLogs(accessLogPath: nil, errorLogPath: nil, logger: Logger(label: "test"))
        try await channel.testingEventLoop.executeInContext {
            let handler = ProxyConnectionHandler(
                idleTimeout: .seconds(30),
                admission: RequestAdmission(
                    authority: ListenerAuthority(boundHost: "127.0.0.1"),
                    webPages: WebPagePolicy(allowedOrigins: []),
                    accessKey: nil,
                    local: local
                ),
                hits: NoCacheHits(),
                logs: logs,
                connections: OpenConnections()
            ) { request, _, _, _ in
                try? await Task.sleep(for: delay)
                return ProxyResponse(status: .ok, body: .bytes(ByteBuffer(string: "answer to \(request.path ?? "")")))
            }
            try ProxyPipeline.setUp(channel, connection: handler)
        }
        try await channel.connect(to: local).get()
        return channel
    }

    /// What the channel wrote until `done` holds of it, or 10 s passed.
    static func written(_ channel: NIOAsyncTestingChannel, until done: (String) -> Bool) async throws -> String {
        var text = ""
        let deadline = ContinuousClock.now + .seconds(10)
        while !done(text), ContinuousClock.now < deadline {
            if let buffer = try await channel.readOutbound(as: IOData.self), case .byteBuffer(let bytes) = buffer {
                text += String(buffer: bytes)
            } else {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        return text
    }

    static func request(_ path: String, version: String = "1.1", fields: String = "") -> String {
        "GET /http://127.0.0.1:1\(path) HTTP/\(version)\r\nHost: 127.0.0.1:8080\r\n\(fields)\r\n"
    }

    @Test func pipelinedRequestsAreAnsweredInOrderWithTheirFraming() async throws {
        let channel = try await Self.connection()
        defer { _ = Task { try? await channel.finish() } }
        try await channel.writeInbound(
            ByteBuffer(
                string: Self.request("/a") + Self.request("/b", version: "1.0", fields: "Connection: keep-alive\r\n")
                    + Self.request("/c", fields: "Sec-Fetch-Mode: no-cors\r\nSec-Fetch-Dest: audio\r\n")
            )
        )
        let text = try await Self.written(channel) { $0.contains("answer to /http://127.0.0.1:1/c") }
        let answers = text.components(separatedBy: "HTTP/1.").dropFirst()
        try #require(answers.count == 3, "\(text)")
        let (a, b, c) = (answers[1], answers[2], answers[3])
        for (answer, path) in [(a, "a"), (b, "b"), (c, "c")] {
            #expect(answer.hasSuffix("answer to /http://127.0.0.1:1/" + path), "\(answer)")
        }
        #expect(a.contains("Content-Security-Policy: sandbox") && !a.contains("Connection:"))
        #expect(b.hasPrefix("0 200") && b.contains("Connection: keep-alive"))
        // A media element's request opens no document: no sandbox.
        #expect(!c.contains("Content-Security-Policy") && c.contains("X-Content-Type-Options: nosniff"))
        #expect(channel.isActive)
    }

    /// Once the server asks connections to finish, the answer owed says `Connection: close`, a
    /// request sent after it is not answered, and the connection closes.
    @Test func aStopAnswersWithACloseAndRefusesNewHeads() async throws {
        let channel = try await Self.connection(answeringAfter: .milliseconds(300))
        defer { _ = Task { try? await channel.finish() } }
        // The responder is answering when the stop arrives; a request follows the stop.
        try await channel.writeInbound(ByteBuffer(string: Self.request("/a")))
        try await channel.testingEventLoop.executeInContext {
            channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        }
        try await channel.writeInbound(ByteBuffer(string: Self.request("/late")))
        let text = try await Self.written(channel) { $0.contains("answer to") }
        #expect(text.hasPrefix("HTTP/1.1 200 OK"), "\(text)")
        #expect(text.hasSuffix("answer to /http://127.0.0.1:1/a"), "\(text)")
        #expect(text.contains("Connection: close"), "\(text)")
        #expect(!text.contains("/late"))
        try await channel.closeFuture.get()
    }
}
