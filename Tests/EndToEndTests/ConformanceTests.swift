import Foundation
import StreamCacheTesting
import Testing

extension OneSuiteAtATime {
    /// RFC 9111's cases for a private cache, written as the public HTTP caching tests write
    /// theirs (`bench/conformance.py`), against the built `serve` and nginx `proxy_cache` side
    /// by side in front of one origin: `serve` passes every one, and so never fewer than nginx.
    @Suite(.timeLimit(.minutes(3))) struct ConformanceTests {
        @Test(.enabled(if: LinuxTools.nginx, "nginx is not at /usr/sbin/nginx"))
        func serveFollowsTheCachingRulesAtLeastAsNginxDoes() async throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            let run = try await Tool.run(
                "STREAMCACHE_BIN=\(CLI.binary)",
                ["bash", root.appendingPathComponent("bench/conformance.sh").path],
                timeout: .seconds(150)
            )
            let output = String(decoding: run.stdout, as: UTF8.self)
            #expect(run.status == 0, "\(output)\(run.stderr)")
            struct Passed: Decodable { let serve: Int, nginx: Int }
            let last = output.split(separator: "\n").last.map(String.init) ?? ""
            let passed = try JSONDecoder().decode(Passed.self, from: Data(last.utf8))
            let total = output.split(separator: "\n").count - 2
            #expect(passed.serve == total, "\(output)")
            #expect(passed.serve >= passed.nginx, "\(output)")
        }
    }
}
