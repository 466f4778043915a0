import NIOCore
import NIOHTTP1
import Testing

@testable import StreamCacheServer

/// The one place a request is admitted or refused, for cache hits and the responder alike.
@Suite struct RequestAdmissionTests {
    static let local = try! SocketAddress(ipAddress: "127.0.0.1", port: 8080)

    func admit(
        _ uri: String = "/https://example.com/a.mp3",
        fields: [(String, String)] = [("Host", "127.0.0.1:8080")],
        version: HTTPVersion = .http1_1,
        accessKey: String? = nil,
        allowedOrigins: [String] = []
    ) -> ProxyRequest {
        var admission = RequestAdmission(
            authority: ListenerAuthority(boundHost: "127.0.0.1"),
            webPages: WebPagePolicy(allowedOrigins: allowedOrigins),
            accessKey: accessKey,
            local: Self.local
        )
        return admission.admit(HTTPRequestHead(version: version, method: .GET, uri: uri, headers: HTTPHeaders(fields)))
    }

    @Test func aPlayersRequestIsServedAndKeepsItsConnection() {
        let request = admit()
        #expect(request.verdict == .serve)
        #expect(!request.closesConnection)
        #expect(admit(version: .http1_0).closesConnection)
        #expect(
            !admit(fields: [("Host", "localhost:8080"), ("Connection", "keep-alive")], version: .http1_0)
                .closesConnection
        )
        #expect(admit(fields: [("Host", "localhost:8080"), ("Connection", "close")]).closesConnection)
    }

    /// Framing and addressing that cannot be trusted: refused, and the connection closed.
    @Test(arguments: [
        ("/https://example.com/a", [("Host", "127.0.0.1:8080"), ("Host", "127.0.0.1:8080")], "2 Host headers"),
        ("/https://example.com/a", [("Host", "127.0.0.1:8080"), ("Transfer-Encoding", "gzip")], "Transfer-Encoding"),
        ("http://evil.example/https://example.com/a", [("Host", "127.0.0.1:8080")], "names another server"),
    ])
    func ambiguousHeadsAreRefusedAndClosed(uri: String, fields: [(String, String)], reason: String) {
        let request = admit(uri, fields: fields)
        guard case .refuse(let refusal) = request.verdict else {
            Issue.record("served \(uri) \(fields)")
            return
        }
        #expect(refusal.status == .badRequest && refusal.reason.contains(reason))
        #expect(request.closesConnection)
    }

    @Test func hostAndWebPageChecks() {
        #expect(admit(fields: []).verdict == .refuse(ProxyRefusal(.badRequest, "the request has no Host header")))
        #expect(admit(fields: [("Host", "evil.example:8080")]).verdict.refusal?.status == .forbidden)
        // An absolute-form target naming this server is served; its Host still must name it.
        #expect(admit("http://127.0.0.1:8080/https://example.com/a").verdict == .serve)
        let page: [(String, String)] = [("Host", "127.0.0.1:8080"), ("Origin", "https://app.example")]
        #expect(admit(fields: page).verdict.refusal?.reason.contains("Origin: https://app.example") == true)
        #expect(
            admit(fields: page, allowedOrigins: ["https://app.example"]).verdict
                == .serveTo(origin: "https://app.example")
        )
        let crossSite: [(String, String)] = [("Host", "127.0.0.1:8080"), ("Sec-Fetch-Site", "cross-site")]
        #expect(admit(fields: crossSite).verdict.refusal?.status == .forbidden)
        // Neither refusal closes the connection: the request's framing is sound.
        #expect(!admit(fields: page).closesConnection)
    }

    @Test func theAccessKeyIsRequiredAndRemoved() {
        let keyed = admit("/k3y/https://example.com/a", accessKey: "k3y")
        #expect(keyed.verdict == .serve && keyed.head.uri == "/https://example.com/a")
        for uri in ["/https://example.com/a", "/k3yz/https://example.com/a", "/k3y"] {
            let request = admit(uri, accessKey: "k3y")
            #expect(request.verdict.refusal?.status == .forbidden, "\(uri)")
            #expect(request.closesConnection)
        }
    }
}

extension ProxyRequest.Verdict {
    var refusal: ProxyRefusal? {
        if case .refuse(let refusal) = self { return refusal }
        return nil
    }
}
