import Foundation
import StreamCacheTesting
import Testing

/// Connections that never finish a request stayed open for good, so at the fd limit new
/// clients hung; an HTTP/1.0 client without keep-alive waited for a close that never came.
@Suite(.timeLimit(.minutes(2))) struct ConnectionTimeoutTests {
    @Test func idleAndPartialRequestsAreClosed() async throws {
        let setup = try await ProxySetup(proxyArguments: ["--idle-timeout", "1"])
        defer { setup.remove() }
        try setup.workspace.write(TestData.bytes(count: 1000, seed: 530), as: "a.bin")
        // A day old: its copy is fresh for a while (RFC 9111 §4.2.2), so the cache answers it.
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -86_400)],
            ofItemAtPath: setup.workspace.originDirectory + "/a.bin"
        )
        let port = setup.proxy.port
        let host = "Host: 127.0.0.1:\(port)\r\n"
        let cases = [
            "nothing at all": "",
            "a partial request line": "GET /http://127.0",
            "partial headers": "GET /\(setup.origin.url("a.bin")) HTTP/1.1\r\n\(host)X-Slow: 1\r\n",
            "an idle keep-alive connection": "GET /\(setup.origin.url("a.bin")) HTTP/1.1\r\n\(host)\r\n",
        ]
        for (name, text) in cases {
            let (closed, reply) = try await RawSocket.converse(text, port: port, seconds: 8)
            #expect(closed, "the proxy kept \(name) open")
            if name.hasPrefix("an idle") { #expect(reply.hasPrefix("HTTP/1.1 200")) }
        }
        // Answered from the cache on the event loop (which sends no `Date`), not by the
        // responder: closed all the same.
        let warm = "GET /\(setup.origin.url("a.bin")) HTTP/1.1\r\n\(host)Range: bytes=0-99\r\n\r\n"
        let (closed, reply) = try await RawSocket.converse(warm, port: port, seconds: 8)
        #expect(closed, "the proxy kept an idle connection open after a cached range")
        #expect(reply.hasPrefix("HTTP/1.1 206"))
        #expect(!reply.lowercased().contains("\r\ndate:"), "the responder answered, not the event loop")
        #expect(setup.proxy.process.isRunning)
    }

    @Test func http10WithoutKeepAliveIsClosedAfterItsResponse() async throws {
        // An idle timeout longer than the wait: only the HTTP/1.0 rule can close these.
        let setup = try await ProxySetup(proxyArguments: ["--idle-timeout", "60"])
        defer { setup.remove() }
        let data = TestData.bytes(count: 1000, seed: 531)
        try setup.workspace.write(data, as: "a.bin")
        let request = "GET /\(setup.origin.url("a.bin")) HTTP/1.0\r\nHost: 127.0.0.1:\(setup.proxy.port)\r\n"
        let (closed, reply) = try await RawSocket.converse(request + "\r\n", port: setup.proxy.port, seconds: 8)
        #expect(closed, "an HTTP/1.0 connection without keep-alive stayed open")
        #expect(reply.contains(" 200 "))
        let (closedToo, _) = try await RawSocket.converse(
            request.replacingOccurrences(of: "HTTP/1.0", with: "HTTP/1.1") + "Connection: close\r\n\r\n",
            port: setup.proxy.port,
            seconds: 8
        )
        #expect(closedToo, "Connection: close was not honoured")
        let (keptOpen, _) = try await RawSocket.converse(
            request + "Connection: keep-alive\r\n\r\n",
            port: setup.proxy.port,
            seconds: 2
        )
        #expect(!keptOpen, "HTTP/1.0 with keep-alive was closed")
    }
}
