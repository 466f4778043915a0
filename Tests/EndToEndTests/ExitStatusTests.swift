import Foundation
import StreamCacheTesting
import Testing

/// `get`'s exit statuses are curl's where curl has one, against real failures: a name that does
/// not resolve, a refused port, a 404, an origin too slow, an output that cannot be written.
@Suite(.timeLimit(.minutes(3))) struct ExitStatusTests {
    struct Case: CustomTestStringConvertible {
        let name: String
        let arguments: [String]
        let status: Int32
        /// Words the one line must hold.
        let says: [String]
        var testDescription: String { name }
    }

    @Test func eachFailureHasItsStatusAndOneLine() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        try workspace.write(TestData.bytes(count: 10_000, seed: 26), as: "a.bin")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let slow = try await OriginProcess(directory: workspace.originDirectory, arguments: ["--latency", "3000"])
        let output = workspace.output("a.bin")
        let refusing = try RefusingPort()
        let cases = [
            Case(
                name: "a name that does not resolve",
                arguments: ["get", "http://no-such-host.invalid/a.mp3", "-o", output],
                status: 6,
                says: ["cannot resolve host no-such-host.invalid"]
            ),
            Case(
                name: "a refused port",
                arguments: ["get", refusing.url("a.mp3"), "-o", output],
                status: 7,
                says: ["cannot connect to 127.0.0.1:", "connection refused"]
            ),
            Case(
                name: "404",
                arguments: ["get", origin.url("missing.mp3"), "-o", output],
                status: 22,
                says: ["404 Not Found", "/missing.mp3"]
            ),
            Case(
                name: "an origin too slow",
                arguments: ["get", slow.url("a.bin"), "--timeout", "1", "-o", output],
                status: 28,
                says: ["timed out"]
            ),
            Case(
                name: "an output that is a folder",
                arguments: ["get", origin.url("a.bin"), "-o", workspace.outputDirectory],
                status: 23,
                says: ["is a directory"]
            ),
        ]
        for entry in cases {
            let result = try await CLI.run(entry.arguments, cacheDir: workspace.cacheDirectory, timeout: .seconds(60))
            #expect(result.status == entry.status, "\(entry.name): \(result.status) \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(entry.name): \(result.stderr)")
            for words in entry.says {
                #expect(result.stderr.contains(words), "\(entry.name): \(result.stderr)")
            }
            #expect(!result.stderr.contains("Error."), "\(entry.name) names a Swift type: \(result.stderr)")
        }
        try await slow.stop()
        try await origin.stop()
    }

    @Test(.enabled(if: Tmpfs.canMount, "mounting a tmpfs needs root"))
    func aFullOutputDiskIsAWriteError() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        try workspace.write(TestData.bytes(count: 3_000_000, seed: 27), as: "a.bin")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let disk = try Tmpfs(megabytes: 1)
        defer { disk.unmount() }
        let result = try await CLI.run(
            ["get", origin.url("a.bin"), "-o", disk.path + "/a.bin"],
            cacheDir: workspace.cacheDirectory
        )
        #expect(result.status == 23, "\(result.status) \(result.stderr)")
        #expect(result.stderr.contains("No space left on device"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: disk.path)) ?? []
        #expect(left.isEmpty, "a partial output was left: \(left)")
        try await origin.stop()
    }
}
