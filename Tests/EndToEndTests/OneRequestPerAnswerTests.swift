import Foundation
import StreamCacheTesting
import Testing

/// An answer the cache may not keep (`no-store`, `Vary: *`) is relayed to the player from the
/// one request that got it: the origin is asked once per play, never twice.
@Suite(.timeLimit(.minutes(3))) struct OneRequestPerAnswerTests {
    @Test(arguments: [["Cache-Control", "no-store"], ["Vary", "*"]])
    func anAnswerTheCacheMayNotKeepIsAskedForOnce(field: [String]) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let size = 300_000
        let origin = try await ScriptedOrigin(["/n.bin": ["size": size, "headers": [field]]], in: workspace)
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let body = ScriptedOrigin.body(size: size)

        let whole = try await Curl.fetch(proxy.url(origin.url("n.bin")))
        let wholeIsRight = whole.status == 200 && Array(whole.body) == body
        #expect(wholeIsRight, "status \(whole.status), \(whole.body.count) bytes")
        #expect(try await origin.requests("n.bin").count == 1, "one play, several requests")

        let part = try await Curl.fetch(proxy.url(origin.url("n.bin")), headers: ["Range: bytes=1000-1999"])
        let partIsRight = part.status == 206 && Array(part.body) == Array(body[1000..<2000])
        #expect(partIsRight, "status \(part.status), \(part.body.count) bytes")
        #expect(try await origin.requests("n.bin").count == 2, "a second play cost more than one request")

        let got = try await CLI.run(
            ["get", origin.url("n.bin"), "-o", workspace.output("n.bin")],
            cacheDir: workspace.cacheDirectory + "-get"
        )
        #expect(got.status == 0, "\(got.stderr)")
        let fileIsRight = workspace.read(workspace.output("n.bin")) == body
        #expect(fileIsRight)
        #expect(try await origin.requests("n.bin").count == 3, "get asked more than once")
        try await proxy.stop()
    }
}
