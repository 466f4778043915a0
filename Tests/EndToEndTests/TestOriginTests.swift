import Foundation
import StreamCacheTesting
import Testing

/// `streamcache origin`, the test origin other tools are measured against, as an HTTP client
/// meets it.
@Suite(.timeLimit(.minutes(2))) struct TestOriginTests {
    /// A client that asks for `Connection: close` and reads slowly gets the whole body: the
    /// origin shuts its side only once every byte is sent.
    @Test func aClosingSlowReaderGetsTheWholeBody() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let bytes = TestData.bytes(count: 6_000_000, seed: 7)
        try workspace.write(bytes, as: "f.bin")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        for attempt in 0..<4 {
            let output = workspace.output("got-\(attempt).bin")
            let result = try await Tool.run(
                "curl",
                ["-s", "-H", "Connection: close", "--limit-rate", "6M", "-o", output, origin.url("f.bin")]
            )
            #expect(result.status == 0, "attempt \(attempt): curl exit \(result.status)")
            let same = workspace.read(output) == bytes
            #expect(same, "attempt \(attempt): \(workspace.read(output)?.count ?? 0) of \(bytes.count) bytes")
        }
    }
}
