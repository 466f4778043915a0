import Foundation
import StreamCacheTesting
import Testing

/// Passwords in URLs were logged verbatim, stored in `index.sqlite`, printed by `ls` and echoed
/// in errors.
@Suite(.timeLimit(.minutes(2))) struct CredentialsTests {
    static let secret = "s3cr3tpw"

    /// Every file under `directory` and `texts`, searched for the password.
    func leaks(in directory: String, texts: [String]) -> [String] {
        var found = texts.filter { $0.contains(Self.secret) }
        let files = FileManager.default.enumerator(atPath: directory)?.compactMap { $0 as? String } ?? []
        for file in files {
            let path = directory + "/" + file
            if let data = FileManager.default.contents(atPath: path),
                data.range(of: Data(Self.secret.utf8)) != nil
            {
                found.append(path)
            }
        }
        return found
    }

    @Test func theProxyLogsNoCredentials() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let logs = workspace.output("access.log")
        let errors = workspace.output("error.log")
        let proxy = try await ListeningProcess(
            ["serve", "--access-log", logs, "--error-log", errors],
            cacheDir: workspace.cacheDirectory
        )
        let reply = try await Curl.fetch(proxy.url("http://user:\(Self.secret)@127.0.0.1:1/a.mp3"))
        #expect(reply.status == 400)
        try await proxy.stop()
        let written = [logs, errors].compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }
        #expect(written.count == 2 && written.allSatisfy { $0.contains("***@127.0.0.1") }, "\(written)")
        #expect(leaks(in: workspace.outputDirectory, texts: []).isEmpty)
    }

    /// However the URL spells them: a collapsed slash (`/http:/alice:pw@…`), a password with `#`,
    /// `/` or `@` that a URL parser reads as fragment, path or host.
    @Test func oddlySpelledCredentialsAreHiddenToo() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let logs = workspace.output("access.log")
        let errors = workspace.output("error.log")
        let proxy = try await ListeningProcess(
            ["serve", "--access-log", logs, "--error-log", errors],
            cacheDir: workspace.cacheDirectory
        )
        let spellings = [
            "http:/alice:\(Self.secret)@127.0.0.1:1/a.mp3",
            "http://alice:pa#\(Self.secret)@127.0.0.1:1/a.mp3",
            "http://alice:pa/\(Self.secret)@127.0.0.1:1/a.mp3",
            "http://alice:pa@\(Self.secret)@127.0.0.1:1/a.mp3",
        ]
        for spelling in spellings {
            let reply = try await RawSocket.exchange(
                "GET /\(spelling) HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\nConnection: close\r\n\r\n",
                port: proxy.port
            )
            #expect(reply.hasPrefix("HTTP/1.1 400"), "\(spelling): \(reply.prefix(80))")
        }
        try await proxy.stop()
        var texts: [String] = []
        for spelling in spellings {
            let got = try await CLI.run(
                ["get", spelling, "-o", workspace.output("a")],
                cacheDir: workspace.cacheDirectory
            )
            #expect(got.status != 0)
            texts.append(got.stderr)
        }
        #expect(leaks(in: workspace.outputDirectory, texts: texts).isEmpty, "\(texts)")
        #expect(leaks(in: workspace.cacheDirectory, texts: []).isEmpty)
    }

    @Test func getSendsThemAsAHeaderAndKeepsNone() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 4000, seed: 521)
        try workspace.write(data, as: "a.bin")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let url = "http://user:\(Self.secret)@127.0.0.1:\(origin.port)/a.bin"
        let got = try await CLI.run(["get", url, "-o", workspace.output("a.bin")], cacheDir: workspace.cacheDirectory)
        #expect(got.status == 0, "\(got.stderr)")
        #expect(workspace.read(workspace.output("a.bin")) == data)
        struct Stats: Decodable {
            struct Request: Decodable { let headers: [String] }
            let requests: [Request]
        }
        let statsURL = URL(string: origin.url("_origin/stats"))!
        let stats = try JSONDecoder().decode(Stats.self, from: try await onOwnThread { try Data(contentsOf: statsURL) })
        let expected = "Authorization: Basic " + Data("user:\(Self.secret)".utf8).base64EncodedString()
        #expect(stats.requests.allSatisfy { $0.headers.contains(expected) })

        let listed = try await CLI.run(["ls", "--json"], cacheDir: workspace.cacheDirectory)
        let refused = try await CLI.run(["get", "ftp://user:\(Self.secret)@example.com/a"], cacheDir: nil)
        #expect(refused.status != 0)
        #expect(leaks(in: workspace.cacheDirectory, texts: [listed.output, got.stderr, refused.stderr]).isEmpty)
    }

    /// A cookie or header that cannot be sent is refused with one line that names no value of it:
    /// a control character, a `;` in a value, a header without its colon.
    @Test func aRefusedCookieOrHeaderIsNotEchoed() async throws {
        let refusals = [
            ["-b", "ok=1; token=\(Self.secret)\u{07}"],
            ["-b", "token=\(Self.secret)\u{1B}[2J"],
            ["-H", "Authorization Bearer \(Self.secret)"],
            ["-H", "Authorization: Bearer \(Self.secret)\u{0B}"],
        ]
        for arguments in refusals {
            let refused = try await CLI.run(["get", "http://127.0.0.1:9/a.bin"] + arguments, cacheDir: nil)
            #expect(refused.status == 64, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
            #expect(!refused.stderr.contains(Self.secret), "\(arguments): \(refused.stderr)")
        }
    }

    /// A response that varies on `Cookie` or `Authorization` records which values it was for as
    /// digests: no value of either is in the cache directory or in what `get -I`, `ls` and the
    /// proxy's logs print, and the stored variant still answers the same request only.
    @Test(arguments: ["Cookie", "Authorization"])
    func aVariantOnCredentialsKeepsNoneOfThem(field: String) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let entry: [String: Any] = ["size": 5000, "headers": [["Vary", field], ["Cache-Control", "max-age=3600"]]]
        let origin = try await ScriptedOrigin(["/v.bin": entry], in: workspace)
        func sending(_ value: String) -> [String] {
            field == "Cookie" ? ["-b", "session=" + value] : ["-H", "Authorization: Bearer " + value]
        }
        var outputs: [String] = []
        for (run, value) in [Self.secret, Self.secret, "other"].enumerated() {
            let got = try await CLI.run(
                ["get", origin.url("v.bin"), "-o", workspace.output("v\(run)")] + sending(value),
                cacheDir: workspace.cacheDirectory
            )
            #expect(got.status == 0, "\(got.stderr)")
            outputs.append(got.stderr)
        }
        // The second get was the stored variant's; another value is another variant.
        #expect(try await origin.requests("v.bin").count == 2)
        let fields = try await CLI.run(
            ["get", "-I", origin.url("v.bin")] + sending(Self.secret),
            cacheDir: workspace.cacheDirectory
        )
        #expect(fields.status == 0, "\(fields.stderr)")
        let listed = try await CLI.run(["ls", "--json"], cacheDir: workspace.cacheDirectory)
        let leaked = leaks(in: workspace.cacheDirectory, texts: outputs + [fields.output, listed.output])
        #expect(leaked.isEmpty, "\(leaked)")
    }

    /// `serve -b` sends its cookies with the player's own fields (a `User-Agent`, an
    /// `Accept-Language`) as well as without them.
    @Test func serveSendsItsCookiesBesideThePlayersFields() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await ScriptedOrigin(["/c.bin": ["size": 1000]], in: workspace)
        let cookies = workspace.output("cookies.txt")
        try "127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\tabc\n".write(toFile: cookies, atomically: true, encoding: .utf8)
        let proxy = try await ListeningProcess(["serve", "-b", cookies], cacheDir: workspace.cacheDirectory)
        let played = try await Curl.fetch(
            proxy.url(origin.url("c.bin")),
            headers: ["User-Agent: player/1.0", "Accept-Language: de"]
        )
        #expect(played.status == 200)
        try await proxy.stop()
        let sent = try await origin.requests("c.bin").first?.fields ?? []
        #expect(sent.contains { $0.first?.lowercased() == "cookie" && $0.last == "session=abc" }, "\(sent)")
        #expect(sent.contains { $0.first?.lowercased() == "accept-language" && $0.last == "de" }, "\(sent)")
    }
}
