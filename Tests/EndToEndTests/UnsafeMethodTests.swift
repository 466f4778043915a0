import Foundation
import StreamCacheTesting
import Testing

/// A request of another method than GET and HEAD goes through `serve` to the origin with its
/// body, its answer comes back as it came, and an answer that is not an error makes what the
/// cache holds of the URL (and of the `Location` it names on the same host) stale: the next
/// play asks the origin first (RFC 9111 §4.4).
@Suite(.timeLimit(.minutes(3))) struct UnsafeMethodTests {
    /// A file fresh for an hour, its bytes shifted by `shift`.
    static func fresh(shift: Int = 0) -> [String: Any] {
        ["size": 20_000, "shift": shift, "headers": [["Cache-Control", "max-age=3600"]]]
    }

    /// The file's bytes after the origin shifted them by `shift`.
    static func body(shift: Int) -> [UInt8] { (0..<20_000).map { UInt8(($0 + shift) % 251) } }

    @Test(arguments: ["POST", "PUT", "DELETE", "PATCH", "M-SEARCH"])
    func anUnsafeMethodIsRelayedAndMakesTheCachedCopyStale(method: String) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await ScriptedOrigin(["/e.bin": Self.fresh()], in: workspace)
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let url = proxy.url(origin.url("e.bin"))

        _ = try await Curl.fetch(url)
        let cached = try await Curl.fetch(url)
        let cachedIsTheFile = Array(cached.body) == Self.body(shift: 0)
        #expect(cachedIsTheFile)
        #expect(try await origin.requests("e.bin").count == 1, "a fresh copy went to the origin")

        let answer = try await Curl.fetch(url, headers: ["Content-Type: text/plain"], method: method, data: "abc")
        #expect(answer.status == 200)
        #expect(String(decoding: answer.body, as: UTF8.self) == "got 3 bytes of text/plain")
        let relayed = try await origin.requests("e.bin").last
        #expect(relayed?.method == method && relayed?.sentBytes == 3, "\(String(describing: relayed))")

        try origin.rescript(["/e.bin": Self.fresh(shift: 7)])
        let played = try await Curl.fetch(url)
        let playedIsNew = Array(played.body) == Self.body(shift: 7)
        #expect(playedIsNew, "after a \(method), the fresh copy was served without asking the origin")
        try await proxy.stop()
    }

    /// An error answer changes nothing; a `Location` on the same host is made stale too, one on
    /// another host is not.
    @Test func onlyASuccessInvalidatesAndOnlyOnItsHost() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        var script: [String: Any] = ["/a.bin": Self.fresh(), "/b.bin": Self.fresh(), "/c.bin": Self.fresh()]
        let origin = try await ScriptedOrigin(script, in: workspace)
        let port = URL(string: origin.url(""))!.port!
        script["/failed"] = ["unsafeStatus": 500, "unsafeHeaders": [["Location", "/a.bin"]]]
        script["/form"] = [
            "unsafeStatus": 303,
            "unsafeHeaders": [["Location", "/b.bin"], ["Content-Location", "http://localhost:\(port)/c.bin"]],
        ]
        try origin.rescript(script)
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        for name in ["a.bin", "b.bin", "c.bin"] { _ = try await Curl.fetch(proxy.url(origin.url(name))) }

        let failed = try await Curl.fetch(proxy.url(origin.url("failed")), method: "POST", data: "x")
        #expect(failed.status == 500)
        let seeOther = try await Curl.fetch(proxy.url(origin.url("form")), method: "POST", data: "x")
        #expect(seeOther.status == 303 && seeOther.headers["location"] == "/b.bin")

        for name in ["a.bin", "b.bin", "c.bin"] {
            script["/" + name] = Self.fresh(shift: 7)
        }
        try origin.rescript(script)
        let a = try await Curl.fetch(proxy.url(origin.url("a.bin")))
        let aIsOld = Array(a.body) == Self.body(shift: 0)
        #expect(aIsOld, "a failed POST made a.bin stale")
        let b = try await Curl.fetch(proxy.url(origin.url("b.bin")))
        let bIsNew = Array(b.body) == Self.body(shift: 7)
        #expect(bIsNew, "the Location of a successful POST stayed fresh")
        let c = try await Curl.fetch(proxy.url(origin.url("c.bin")))
        let cIsOld = Array(c.body) == Self.body(shift: 0)
        #expect(cIsOld, "a Content-Location on another host was made stale")
        try await proxy.stop()
    }

    /// A body over the limit and `TRACE` are refused with one line, and the origin
    /// never sees them.
    @Test func whatIsNotRelayedIsRefused() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await ScriptedOrigin(["/e.bin": Self.fresh()], in: workspace)
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let url = proxy.url(origin.url("e.bin"))

        let upload = workspace.output("upload.bin")
        try Data(count: 1 << 21).write(to: URL(fileURLWithPath: upload))
        let large = try await Curl.fetch(url, method: "POST", data: "@" + upload)
        #expect(large.status == 413, "\(large.status)")
        #expect(String(decoding: large.body, as: UTF8.self).contains("at most 1 MiB"))
        let trace = try await Curl.fetch(url, method: "TRACE")
        #expect(trace.status == 405 && trace.headers["allow"] == "GET, HEAD")
        #expect(try await origin.requests("e.bin").isEmpty)
        try await proxy.stop()
    }
}
