import NIOCore
import NIOEmbedded
import NIOHTTP1
import StreamCacheTesting
import Testing

@testable import StreamCacheServer

/// The request heads the connection's front reads itself, before NIO's HTTP decoder: what it reads,
/// it reads as the decoder does; what it leaves, the decoder reads.
@Suite struct WholeRequestHeadTests {
    /// The head NIO's decoder reads from `text`, if it reads exactly one whole request.
    private func decoderHead(_ text: [UInt8]) -> HTTPRequestHead? {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPRequestDecoder()))
        defer { _ = try? channel.finish() }
        guard (try? channel.writeInbound(ByteBuffer(bytes: text))) != nil else { return nil }
        var parts: [HTTPServerRequestPart] = []
        while let part = try? channel.readInbound(as: HTTPServerRequestPart.self) { parts.append(part) }
        guard parts.count == 2, case .head(let head) = parts[0], case .end(nil) = parts[1] else { return nil }
        return head
    }

    private func parsed(_ text: String) -> HTTPRequestHead? {
        WholeRequestHead.parse(ByteBuffer(string: text))
    }

    private func same(_ a: HTTPRequestHead, _ b: HTTPRequestHead) -> Bool {
        a.method == b.method && a.uri == b.uri && a.version == b.version
            && a.headers.map { [$0.name, $0.value] } == b.headers.map { [$0.name, $0.value] }
    }

    @Test(arguments: [
        // curl, ffmpeg, AVPlayer, an HTTP/1.0 client that keeps the connection
        head(
            "GET /https://cdn.example/ep.mp3 HTTP/1.1",
            "Host: 127.0.0.1:8080",
            "User-Agent: curl/7.88.1",
            "Accept: */*",
            "Range: bytes=0-4095"
        ),
        head(
            "GET /http://127.0.0.1:9/a.ts?t=1&x=%20y HTTP/1.1",
            "User-Agent: Lavf/59.27.100",
            "Accept: */*",
            "Range: bytes=100-",
            "Connection: close",
            "Host: 127.0.0.1:8080",
            "Icy-MetaData: 1"
        ),
        head("GET /https://[::1]:8443/a.mp4 HTTP/1.1", "Host: localhost:8080", "Range: bytes=-500", "If-Range: \"v1\""),
        head(
            "GET /https://cdn.example/v.mp4 HTTP/1.1",
            "Host: 127.0.0.1:8080",
            "X-Playback-Session-Id: 1B2C",
            "Range: bytes=0-1",
            "Accept-Encoding: identity",
            "User-Agent: AppleCoreMedia/1.0.0.21A5 (iPhone; U; CPU OS 17_0 like Mac OS X; en_us)"
        ),
        head("GET /https://cdn.example/ep.mp3 HTTP/1.0", "Host: 127.0.0.1:8080", "Connection: keep-alive"),
        // blanks around a value, an empty value
        head("GET /https://cdn.example/ep.mp3 HTTP/1.1", "Host:127.0.0.1:8080 \t", "X-Empty:", "X-Blank:   "),
    ])
    func aPlayersHeadIsReadAsTheDecoderReadsIt(_ text: String) throws {
        let head = try #require(parsed(text))
        let decoded = try #require(decoderHead(Array(text.utf8)))
        #expect(same(head, decoded), "\(head) against \(decoded)")
    }

    @Test(arguments: [
        "GET /https://cdn.example/ep.mp3 HTTP/1.1\r\nHost: h\r\n",  // not whole yet
        "GET /https://cdn.example/ep.mp3 HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n",  // two
        "GET /https://cdn.example/ep.mp3 HTTP/1.1\r\nHost: h\r\n\r\nxyz",  // bytes after the head
        "HEAD /https://cdn.example/ep.mp3 HTTP/1.1\r\nHost: h\r\n\r\n",
        "POST /https://cdn.example/ep.mp3 HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nx",
        "get /https://cdn.example/ep.mp3 HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET https://cdn.example/ep.mp3 HTTP/1.1\r\nHost: h\r\n\r\n",  // absolute-form
        "GET * HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET  /https://cdn.example/ep.mp3 HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /https://cdn.example/a#b HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /https://cdn.example/{a} HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /https://cdn.example/é.mp3 HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /https://cdn.example/ep.mp3 HTTP/2.0\r\nHost: h\r\n\r\n",
        "GET /https://cdn.example/ep.mp3 HTTP/1.2\r\nHost: h\r\n\r\n",
        "GET /https://cdn.example/ep.mp3 HTTP/1.1\nHost: h\n\n",
        "GET /https://cdn.example/ep.mp3 HTTP/1.1\r\nHost: h\r\nX-Folded: a\r\n b\r\n\r\n",
        "GET /https://cdn.example/ep.mp3 HTTP/1.1\r\nHost: h\r\nNo colon here\r\n\r\n",
        "GET /https://cdn.example/ep.mp3 HTTP/1.1\r\nHost : h\r\n\r\n",
        "GET /https://cdn.example/ep.mp3 HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n",
        "GET /https://cdn.example/ep.mp3 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "GET /https://cdn.example/ep.mp3 HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n",
        "GET /https://cdn.example/ep.mp3 HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n",
        "GET /https://cdn.example/ep.mp3 HTTP/1.1\r\nHost: h\r\nX-Name: café\r\n\r\n",
        "GET /https://cdn.example/ep.mp3 HTTP/1.1\r\nHost: h\r\nX-Name: a\u{7F}b\r\n\r\n",
        "GET /https://cdn.example/ep.mp3 HTTP/1.1\r\nHost: h\r\nX-Name: a\rb\r\n\r\n",
    ])
    func whatTheDecoderReadsInstead(_ text: String) {
        #expect(parsed(text) == nil)
    }

    /// Heads bent at random (bytes put in, taken out, replaced): whenever the shortcut reads
    /// one, the decoder reads the same one request from the same bytes.
    @Test(arguments: [UInt64(1), 2, 3])
    func everyBentHeadItReadsTheDecoderReadsAlike(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let template = Array(
            head(
                "GET /https://cdn.example/ep.mp3?a=1 HTTP/1.1",
                "Host: 127.0.0.1:8080",
                "Range: bytes=0-99",
                "X-A: b c"
            )
            .utf8
        )
        let alphabet = Array("\r\n \t:/G?#%a0-\u{7F}".utf8) + [0x00, 0x80, 0xC3, 0xFF]
        var read = 0
        for _ in 0..<3_000 {
            var bytes = template
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                let byte = alphabet.randomElement(using: &random)!
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes.insert(byte, at: at)
                case 1: bytes.remove(at: at)
                default: bytes[at] = byte
                }
            }
            guard let head = WholeRequestHead.parse(ByteBuffer(bytes: bytes)) else { continue }
            read += 1
            let decoded = try #require(
                decoderHead(bytes),
                "the decoder refused \(String(decoding: bytes, as: UTF8.self).debugDescription)"
            )
            #expect(same(head, decoded), "\(String(decoding: bytes, as: UTF8.self).debugDescription)")
        }
        // Some bent heads are still whole ones (a changed value, an added field).
        #expect(read > 100)
    }
}

/// A request head of these lines.
private func head(_ lines: String...) -> String {
    lines.joined(separator: "\r\n") + "\r\n\r\n"
}
