import Foundation
import StreamCacheTesting
import Testing

/// Failed requests (404s, refused connections, broken answers) left an empty data file and an
/// index row each, which eviction never removed.
@Suite(.timeLimit(.minutes(3))) struct FailureResidueTests {
    struct Listed: Decodable { let url: String }

    func dataFiles(_ cacheDirectory: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: cacheDirectory + "/data")) ?? []
    }

    @Test func failuresThroughServeLeaveNothing() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        // Held, so that no other test's server takes it while these requests are refused.
        let dead = try RefusingPort()
        for number in 0..<40 {
            let missing = try await Curl.fetch(setup.url("missing-\(number).mp3"))
            #expect(missing.status == 404)
        }
        for number in 0..<10 {
            let refused = try await Curl.fetch(setup.proxy.url(dead.url("gone-\(number).mp3")))
            #expect(refused.status == 502)
        }
        // Sessions close once unused for their linger time (2 s); then nothing may be left.
        try await Task.sleep(for: .seconds(3))
        let listed = try await CLI.run(["ls", "--json"], cacheDir: setup.workspace.cacheDirectory)
        let resources = try JSONDecoder().decode(ListingOf<Listed>.self, from: listed.stdout).resources
        #expect(resources.isEmpty, "rows left: \(resources.count)")
        #expect(dataFiles(setup.workspace.cacheDirectory).isEmpty)
        #expect(setup.proxy.process.isRunning)
    }

    @Test func aFailedGetLeavesNothing() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let missing = try await CLI.run(["get", origin.url("nope.mp3")], cacheDir: workspace.cacheDirectory)
        #expect(missing.status != 0)
        let dead = try RefusingPort()
        let refused = try await CLI.run(["get", dead.url("x.mp3")], cacheDir: workspace.cacheDirectory)
        #expect(refused.status != 0)
        let listed = try await CLI.run(["ls", "--json"], cacheDir: workspace.cacheDirectory)
        let resources = try JSONDecoder().decode(ListingOf<Listed>.self, from: listed.stdout).resources
        #expect(resources.isEmpty, "rows left: \(resources.map(\.url))")
        #expect(dataFiles(workspace.cacheDirectory).isEmpty)
    }
}
