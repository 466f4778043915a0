import Foundation
import StreamCacheTesting
import Testing

/// The fields a cache stores are the ones it sends again (RFC 9111 §3.1): a `Set-Cookie` goes
/// back to the one user of a private `serve` from memory, never written to disk and never sent
/// by a shared one; a whole answer's own `Content-Range` is kept, a part's is not.
@Suite(.timeLimit(.minutes(2))) struct StoredFieldReplayTests {
    static let cookie = "session=c\(UInt32.random(in: 100_000...999_999))"

    static func script() -> [String: Any] {
        [
            "/c.bin": [
                "size": 5000, "ignoresRange": true,
                "headers": [
                    ["Cache-Control", "max-age=600"], ["Set-Cookie", cookie],
                    ["Content-Range", "ranges-of-the-origin"],
                ],
            ],
            "/p.bin": ["size": 5000, "headers": [["Cache-Control", "max-age=600"]]],
            "/hinted.bin": [
                "size": 5000, "ignoresRange": true, "headers": [["Cache-Control", "max-age=600"]],
                "interim": [["Link", "</style.css>; rel=preload; as=style"]],
            ],
        ]
    }

    @Test(arguments: [false, true])
    func aCookieGoesBackOnlyToAPrivateCachesUserAndNeverToDisk(shared: Bool) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await ScriptedOrigin(Self.script(), in: workspace)
        let proxy = try await ListeningProcess(
            ["serve"] + (shared ? ["--shared"] : []),
            cacheDir: workspace.cacheDirectory
        )
        // Answered from what was stored, as it is read: a shared cache's first answer too.
        let first = try await Curl.fetch(proxy.url(origin.url("c.bin")))
        #expect(first.headers["set-cookie"] == (shared ? nil : Self.cookie))
        for range in [[], ["Range: bytes=10-19"]] {
            let cached = try await Curl.fetch(proxy.url(origin.url("c.bin")), headers: range)
            #expect(try await origin.requests("c.bin").count == 1, "not answered from the cache")
            #expect(cached.headers["set-cookie"] == (shared ? nil : Self.cookie), "\(range) shared: \(shared)")
        }
        // Once the resource's session has closed (2 s unused), from the process's memory.
        try await Task.sleep(for: .seconds(3))
        let later = try await Curl.fetch(proxy.url(origin.url("c.bin")))
        #expect(try await origin.requests("c.bin").count == 1, "not answered from the cache")
        #expect(later.headers["set-cookie"] == (shared ? nil : Self.cookie), "after the session closed")
        try await proxy.stop()
        let onDisk = try FileManager.default.subpathsOfDirectory(atPath: workspace.cacheDirectory).contains { path in
            let data = FileManager.default.contents(atPath: workspace.cacheDirectory + "/" + path) ?? Data()
            return data.range(of: Data(Self.cookie.utf8)) != nil
        }
        #expect(!onDisk, "the cookie was written to the cache directory")

        // Another process, which never received it, sends none.
        let next = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let elsewhere = try await Curl.fetch(next.url(origin.url("c.bin")))
        #expect(elsewhere.headers["set-cookie"] == nil)
        try await next.stop()
    }

    /// A `103 Early Hints` before the answer is not the answer: neither it nor its fields are
    /// stored (RFC 9111 §3).
    @Test func anInterimAnswerIsNeitherStoredNorSentAgain() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await ScriptedOrigin(Self.script(), in: workspace)
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        for _ in 0..<2 {
            let reply = try await Curl.fetch(proxy.url(origin.url("hinted.bin")))
            #expect(reply.status == 200 && reply.body.count == 5000 && reply.headers["link"] == nil, "\(reply.headers)")
        }
        #expect(try await origin.requests("hinted.bin").count == 1, "the final answer was not stored")
        // The origin does send the hint, which curl keeps among the fields it saw.
        let direct = try await Curl.fetch(origin.url("hinted.bin"))
        #expect(direct.headers["link"] != nil)
        try await proxy.stop()
    }

    @Test func aWholeAnswersContentRangeIsKeptAndAPartsIsNot() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await ScriptedOrigin(Self.script(), in: workspace)
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        _ = try await Curl.fetch(proxy.url(origin.url("c.bin")))
        let whole = try await Curl.fetch(proxy.url(origin.url("c.bin")))
        #expect(whole.status == 200 && whole.headers["content-range"] == "ranges-of-the-origin")
        let part = try await Curl.fetch(proxy.url(origin.url("c.bin")), headers: ["Range: bytes=10-19"])
        #expect(part.status == 206 && part.headers["content-range"] == "bytes 10-19/5000")

        // Stored from the origin's 206, the whole answer says nothing of a part.
        _ = try await Curl.fetch(proxy.url(origin.url("p.bin")), headers: ["Range: bytes=0-99"])
        _ = try await Curl.fetch(proxy.url(origin.url("p.bin")))
        let cached = try await Curl.fetch(proxy.url(origin.url("p.bin")))
        #expect(cached.status == 200 && cached.headers["content-range"] == nil, "\(cached.headers)")
        try await proxy.stop()
    }
}
