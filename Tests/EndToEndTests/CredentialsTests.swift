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
        let stats = try JSONDecoder().decode(
            Stats.self,
            from: Data(contentsOf: URL(string: origin.url("_origin/stats"))!)
        )
        let expected = "Authorization: Basic " + Data("user:\(Self.secret)".utf8).base64EncodedString()
        #expect(stats.requests.allSatisfy { $0.headers.contains(expected) })

        let listed = try await CLI.run(["ls", "--json"], cacheDir: workspace.cacheDirectory)
        let refused = try await CLI.run(["get", "ftp://user:\(Self.secret)@example.com/a"], cacheDir: nil)
        #expect(refused.status != 0)
        #expect(leaks(in: workspace.cacheDirectory, texts: [listed.output, got.stderr, refused.stderr]).isEmpty)
    }
}
