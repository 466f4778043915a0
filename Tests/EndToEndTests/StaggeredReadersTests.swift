import Foundation
import StreamCacheTesting
import Testing

/// Two curl readers of one file through `serve`, the second starting while the first's fetch
/// from a slow origin is still running: both get the origin's bytes, and so does a replay.
@Suite(.timeLimit(.minutes(5))) struct StaggeredReadersTests {
    @Test func aSecondReaderInsideASlowFetchGetsTheOriginsBytes() async throws {
        let setup = try await ProxySetup(originArguments: ["--rate", "1M", "--latency", "1000"])
        defer { setup.remove() }
        let data = TestData.bytes(count: 3_000_000, seed: 111)
        try setup.workspace.write(data, as: "r.bin")
        async let first = Curl.fetch(setup.url("r.bin"), headers: ["Range: bytes=0-1048575"])
        try await Task.sleep(for: .milliseconds(500))
        let second = try await Curl.fetch(setup.url("r.bin"), headers: ["Range: bytes=300000-1048575"])
        #expect(TestData.mismatch(try await first.body, slice(data, 0, 1_048_576)) == nil, "the first reader got wrong bytes")
        #expect(TestData.mismatch(second.body, slice(data, 300_000, 748_576)) == nil, "the second reader got wrong bytes")

        let replay = try await Curl.fetch(setup.url("r.bin"))
        #expect(TestData.mismatch(replay.body, data) == nil, "the cache kept a wrong byte")
    }
}

func slice(_ data: [UInt8], _ offset: Int, _ length: Int) -> [UInt8] {
    Array(data[offset..<min(data.count, offset + length)])
}
