import Foundation
import StreamCacheTesting
import Testing

/// What may open as a document of the proxy's web origin carries the sandbox, beside any policy
/// the origin sent; a browser's fetch or media request, which cannot, gets the origin's policy
/// as it was stored (RFC 9111 §3.1). The browser's side of it: `UntrustedInputTests`.
@Suite(.timeLimit(.minutes(2))) struct DocumentSandboxTests {
    @Test func aDocumentGetsTheSandboxAndAFetchTheOriginsPolicy() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let policy = "default-src 'self'"
        let page: [String: Any] = [
            "size": 3000,
            "headers": [
                ["Content-Type", "text/html"], ["Content-Security-Policy", policy], ["Cache-Control", "max-age=600"],
            ],
        ]
        let origin = try await ScriptedOrigin(["/page.html": page], in: workspace)
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let url = proxy.url(origin.url("page.html"))
        let cases: [(fields: [String], sandboxed: Bool)] = [
            ([], true),
            (["Sec-Fetch-Mode: navigate", "Sec-Fetch-Dest: document"], true),
            (["Sec-Fetch-Mode: no-cors", "Sec-Fetch-Dest: iframe"], true),
            (["Sec-Fetch-Mode: same-origin", "Sec-Fetch-Dest: worker"], true),
            (["Sec-Fetch-Mode: cors", "Sec-Fetch-Dest: empty"], false),
            (["Sec-Fetch-Mode: cors"], false),
            (["Sec-Fetch-Mode: no-cors", "Sec-Fetch-Dest: video"], false),
        ]
        // Cold (the responder), then warm (the cache hits), then a range of it.
        for extra in [[], [], ["Range: bytes=0-99"]] {
            for (fields, sandboxed) in cases {
                let reply = try await Curl.fetch(url, headers: fields + extra)
                // The last field of a name is the one kept: the sandbox goes after the origin's.
                let expected = sandboxed ? "sandbox" : policy
                #expect(
                    reply.headers["content-security-policy"] == expected,
                    "\(fields + extra): \(reply.headers["content-security-policy"] ?? "none")"
                )
                #expect(reply.headers["x-content-type-options"] == "nosniff")
            }
        }
        try await proxy.stop()
    }
}
