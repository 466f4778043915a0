import Foundation
import StreamCacheTesting
import Testing

/// The cache holds URLs and bytes a user fetched: only that user may read it (XDG: 0700).
@Suite(.timeLimit(.minutes(2))) struct PermissionsTests {
    private func mode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int).map { $0 & 0o777 }
    }

    @Test func theDefaultCacheDirectoryAndItsFilesAreTheUsersAlone() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        try workspace.write(TestData.bytes(count: 1000, seed: 800), as: "a.bin")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let home = workspace.outputDirectory + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = ["get", origin.url("a.bin"), "-o", workspace.output("a.bin")]
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home
        environment["STREAMCACHE_DIR"] = nil
        environment["XDG_CACHE_HOME"] = nil
        process.environment = environment
        let result = try await process.runToCompletion(timeout: .seconds(60))
        #expect(result.status == 0, "\(result.stderr)")
        let cache = home + "/.cache/streamcache"
        for directory in [home + "/.cache", cache, cache + "/data"] {
            #expect(mode(directory) == 0o700, "\(directory) is \(String(mode(directory) ?? 0, radix: 8))")
        }
        let dataFiles = try FileManager.default.contentsOfDirectory(atPath: cache + "/data")
        #expect(!dataFiles.isEmpty)
        for file in dataFiles.map({ cache + "/data/" + $0 }) + [cache + "/index.sqlite"] {
            #expect(mode(file) == 0o600, "\(file) is \(String(mode(file) ?? 0, radix: 8))")
        }
    }
}
