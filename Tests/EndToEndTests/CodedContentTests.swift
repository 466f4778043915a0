import Foundation
import StreamCacheTesting
import Testing

/// Content an origin codes although the cache asks for the content itself
/// (`Accept-Encoding: identity`): nginx with `gzip_static always` sends `NAME.gz` as `NAME`,
/// `Content-Encoding: gzip`, to every client. `serve` stores and answers it as it came, the field
/// with it (RFC 9111 §3), and its players decode it; a file or a playlist needs the content, so
/// `get` and the playlist rewrite refuse it in one line.
@Suite(.timeLimit(.minutes(3)), .enabled(if: LinuxTools.nginx)) struct CodedContentTests {
    /// 200 kB, its gzip beside it, both dated a day back (so a cached copy is fresh for
    /// hours by RFC 9111's heuristic), under nginx.
    struct CodingOrigin {
        let workspace = Workspace()
        let text = Data(TestData.bytes(count: 200_000, seed: 610))
        let coded: Data
        let nginx: NginxProcess

        init(name: String) async throws {
            let path = workspace.originDirectory + "/" + name
            try text.write(to: URL(fileURLWithPath: path))
            let gzip = try await Tool.run("gzip", ["-k", "-n", path])
            #expect(gzip.status == 0, "\(gzip.stderr)")
            coded = try Data(contentsOf: URL(fileURLWithPath: path + ".gz"))
            let dayBack = Date().addingTimeInterval(-86400)
            for file in [path, path + ".gz"] {
                try FileManager.default.setAttributes([.modificationDate: dayBack], ofItemAtPath: file)
            }
            nginx = try await NginxProcess(codingEverythingIn: workspace.originDirectory)
        }
    }

    @Test func serveKeepsCodedContentAndPassesItOnWithItsCoding() async throws {
        let origin = try await CodingOrigin(name: "notes.txt")
        defer { origin.workspace.remove() }
        let proxy = try await ListeningProcess(["serve"], cacheDir: origin.workspace.cacheDirectory)
        let url = proxy.url(origin.nginx.url("notes.txt"))

        // A client that decodes gets the content.
        let decoded = origin.workspace.output("decoded.txt")
        let curl = try await Tool.run("curl", ["-s", "-f", "--compressed", "-o", decoded, url])
        #expect(curl.status == 0, "\(curl.stderr)")
        #expect(FileManager.default.contents(atPath: decoded) == origin.text)

        // A range of the coded bytes, from the cache, says what they are.
        let range = try await Curl.fetch(url, headers: ["Range: bytes=100-1099"])
        #expect(range.status == 206)
        #expect(range.headers["content-encoding"] == "gzip")
        #expect(range.body == origin.coded[100..<1100])
        #expect(origin.nginx.requests().count == 1, "\(origin.nginx.requests())")

        // `get` on the same cache needs the content: one line, no file, no crash.
        let file = origin.workspace.output("notes-get.txt")
        let got = try await CLI.run(
            ["get", origin.nginx.url("notes.txt"), "-o", file],
            cacheDir: origin.workspace.cacheDirectory
        )
        #expect(got.status != 0)
        #expect(got.stderr.contains("Content-Encoding: gzip"), "\(got.stderr)")
        #expect(got.stderr.split(separator: "\n").count == 1, "\(got.stderr)")
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    /// A playlist is rewritten from its text: coded, it gets a 502 that names the coding, not a
    /// document that would lead the player past the cache. Its name says nothing (`.hls`, a
    /// playlist by its type), so only the coding makes the cached copy be checked again.
    @Test func aCodedPlaylistIsRefusedUntilTheOriginSendsItsText() async throws {
        let origin = try await CodingOrigin(name: "show.hls")
        defer { origin.workspace.remove() }
        let proxy = try await ListeningProcess(["serve"], cacheDir: origin.workspace.cacheDirectory)
        let reply = try await Curl.fetch(proxy.url(origin.nginx.url("show.hls")))
        #expect(reply.status == 502)
        #expect(String(decoding: reply.body, as: UTF8.self).contains("Content-Encoding: gzip"))
        #expect(proxy.process.isRunning)

        // The origin stops coding it: the coded copy, fresh as it is, is checked and replaced.
        let playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\na.ts\n#EXT-X-ENDLIST\n"
        let path = origin.workspace.originDirectory + "/show.hls"
        try playlist.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(atPath: path + ".gz")
        let fixed = try await Curl.fetch(proxy.url(origin.nginx.url("show.hls")))
        #expect(fixed.status == 200, "\(String(decoding: fixed.body, as: UTF8.self))")
        #expect(String(decoding: fixed.body, as: UTF8.self).contains("/http://127.0.0.1:\(origin.nginx.port)/a.ts"))
    }
}
