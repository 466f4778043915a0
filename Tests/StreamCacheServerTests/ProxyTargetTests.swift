import Foundation
import StreamCacheServer
import Testing

@Suite struct ProxyTargetTests {
    @Test(arguments: [
        ("/https://example.com/ep.mp3", "https://example.com/ep.mp3"),
        ("/http://127.0.0.1:8080/a/b.mp4?t=1&x=%20y", "http://127.0.0.1:8080/a/b.mp4?t=1&x=%20y"),
        ("/https:/example.com/ep.mp3", "https://example.com/ep.mp3"),
        ("/HTTPS://Example.com/ep.mp3", "HTTPS://Example.com/ep.mp3"),
        ("/https://example.com/a..b/c.mp3", "https://example.com/a..b/c.mp3"),
        ("/https://example.com:443/%E2%82%AC.mp3#t=1", "https://example.com:443/%E2%82%AC.mp3#t=1"),
        ("/http://[::1]:8080/a.ts", "http://[::1]:8080/a.ts"),
        // Characters a URL may not hold as they are, as some players send them: percent-encoded.
        ("/https://example.com/a{b}|c", "https://example.com/a%7Bb%7D%7Cc"),
        ("/https://example.com/a<b>?q=\"x\"", "https://example.com/a%3Cb%3E?q=%22x%22"),
    ])
    func acceptsAbsoluteHTTPURLs(target: String, expected: String) throws {
        #expect(try ProxyTarget(requestTarget: target).url.absoluteString == expected)
    }

    @Test(arguments: [
        "https://example.com/ep.mp3",
        "/file:///etc/passwd",
        "/ftp://example.com/a",
        "/javascript:alert(1)",
        "/example.com/ep.mp3",
        "/https://",
        "/https:///ep.mp3",
        "/http://:8080/ep.mp3",
        "/https://user:pw@example.com/a",
        "/https://user@example.com/a",
        "/https://@example.com/a",
        "/https://:pw@example.com/a",
        "/https://example.com/../etc/passwd",
        "/https://example.com/a/%2e%2E/b",
        "/https://example.com/./a",
        "/https://example.com/a b",
        "/https://example.com/a\r\nX-Injected: 1",
        "/https://example.com/a\u{7F}",
    ])
    func refusesAnythingElseWith400(target: String) {
        let refusal = #expect(throws: ProxyRefusal.self) { try ProxyTarget(requestTarget: target) }
        #expect(refusal?.status == .badRequest, "\(target.debugDescription)")
    }

    @Test func aBareSlashIsNotFound() {
        let refusal = #expect(throws: ProxyRefusal.self) { try ProxyTarget(requestTarget: "/") }
        #expect(refusal?.status == .notFound)
    }
}
