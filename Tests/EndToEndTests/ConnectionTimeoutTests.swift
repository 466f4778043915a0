import Foundation
import StreamCacheTesting
import Testing

/// Connections that never finish a request stayed open for good, so at the fd limit new
/// clients hung; an HTTP/1.0 client without keep-alive waited for a close that never came.
@Suite(.timeLimit(.minutes(2))) struct ConnectionTimeoutTests {
    /// Sends `text` on a new connection, then reads until the server closes it (`true`) or
    /// `seconds` pass (`false`); `received` gets what came back.
    static func closes(after text: String, port: Int, within seconds: Int) async throws -> (Bool, String) {
        try await onOwnThread {
            let socket = try RawSocket.connect(host: "127.0.0.1", port: port)
            defer { close(socket.descriptor) }
            var timeout = timeval(tv_sec: seconds, tv_usec: 0)
            setsockopt(socket.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { send(socket.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var reply = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = recv(socket.descriptor, &buffer, buffer.count, 0)
                if count == 0 { return (true, String(decoding: reply, as: UTF8.self)) }
                if count < 0 { return (errno == ECONNRESET, String(decoding: reply, as: UTF8.self)) }
                reply += buffer[..<count]
            }
        }
    }

    @Test func idleAndPartialRequestsAreClosed() async throws {
        let setup = try await ProxySetup(proxyArguments: ["--idle-timeout", "1"])
        defer { setup.remove() }
        try setup.workspace.write(TestData.bytes(count: 1000, seed: 530), as: "a.bin")
        let port = setup.proxy.port
        let host = "Host: 127.0.0.1:\(port)\r\n"
        let cases = [
            "nothing at all": "",
            "a partial request line": "GET /http://127.0",
            "partial headers": "GET /\(setup.origin.url("a.bin")) HTTP/1.1\r\n\(host)X-Slow: 1\r\n",
            "an idle keep-alive connection": "GET /\(setup.origin.url("a.bin")) HTTP/1.1\r\n\(host)\r\n",
        ]
        for (name, text) in cases {
            let (closed, reply) = try await Self.closes(after: text, port: port, within: 8)
            #expect(closed, "the proxy kept \(name) open")
            if name.hasPrefix("an idle") { #expect(reply.hasPrefix("HTTP/1.1 200")) }
        }
        #expect(setup.proxy.process.isRunning)
    }

    @Test func http10WithoutKeepAliveIsClosedAfterItsResponse() async throws {
        // An idle timeout longer than the wait: only the HTTP/1.0 rule can close these.
        let setup = try await ProxySetup(proxyArguments: ["--idle-timeout", "60"])
        defer { setup.remove() }
        let data = TestData.bytes(count: 1000, seed: 531)
        try setup.workspace.write(data, as: "a.bin")
        let request = "GET /\(setup.origin.url("a.bin")) HTTP/1.0\r\nHost: 127.0.0.1:\(setup.proxy.port)\r\n"
        let (closed, reply) = try await Self.closes(after: request + "\r\n", port: setup.proxy.port, within: 8)
        #expect(closed, "an HTTP/1.0 connection without keep-alive stayed open")
        #expect(reply.contains(" 200 "))
        let (closedToo, _) = try await Self.closes(
            after: request.replacingOccurrences(of: "HTTP/1.0", with: "HTTP/1.1") + "Connection: close\r\n\r\n",
            port: setup.proxy.port,
            within: 8
        )
        #expect(closedToo, "Connection: close was not honoured")
        let (keptOpen, _) = try await Self.closes(
            after: request + "Connection: keep-alive\r\n\r\n",
            port: setup.proxy.port,
            within: 2
        )
        #expect(!keptOpen, "HTTP/1.0 with keep-alive was closed")
    }
}
