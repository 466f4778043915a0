import NIOHTTP1
import Testing

@testable import StreamCacheServer

/// The one pass the proxy makes over a request's fields: what it reads, in any case, and which
/// requests only the responder answers.
@Suite struct RequestFieldsTests {
    private func read(_ fields: [(String, String)]) -> RequestFields {
        RequestFields(HTTPHeaders(fields))
    }

    @Test func theFieldsItReadsInAnyCase() {
        let fields = read([
            ("HOST", "127.0.0.1:8080"), ("rAnGe", "bytes=0-1"), ("If-Range", "\"v1\""), ("Origin", "null"),
            ("Sec-Fetch-Site", "none"), ("Referer", "http://127.0.0.1:8080/"), ("Content-Length", "0"),
            ("Hast", "x"), ("X-Range", "bytes=5-"), ("User-Agent", "mpv"),
        ])
        #expect(!fields.isTheResponders)
        #expect(fields.host == "127.0.0.1:8080")
        #expect(fields.range == "bytes=0-1")
        #expect(fields.ifRange == "\"v1\"")
        #expect(fields.origin == "null")
        #expect(fields.fetchSite == "none")
        #expect(fields.referer == "http://127.0.0.1:8080/")
        #expect(fields.hostCount == 1 && fields.transferCodings.isEmpty)
    }

    @Test func repeatedFieldsAreCountedOrJoined() {
        let fields = read([
            ("Host", "a"), ("host", "b"), ("Transfer-Encoding", "gzip"), ("transfer-encoding", "Chunked"),
            ("Origin", "https://a.example"), ("origin", "https://b.example"),
        ])
        #expect(fields.host == "a" && fields.hostCount == 2)
        #expect(fields.transferCodings == ["gzip", "chunked"])
        #expect(fields.origin == "https://a.example, https://b.example")
    }

    @Test(arguments: [
        [("Host", "a"), ("host", "b")],
        [("Host", "a"), ("Range", "bytes=0-1"), ("RANGE", "bytes=2-3")],
        [("Host", "a"), ("If-None-Match", "\"v1\"")],
        [("Host", "a"), ("if-modified-since", "Tue, 14 Nov 2023 22:13:20 GMT")],
        [("Host", "a"), ("Content-Length", "5")],
        [("Host", "a"), ("Transfer-Encoding", "chunked")],
        [("Host", "a"), ("Referer", "x"), ("Referer", "y")],
    ])
    func requestsItLeavesToTheResponder(fields: [(String, String)]) {
        #expect(read(fields).isTheResponders, "\(fields)")
    }
}
