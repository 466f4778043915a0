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
        #expect(
            TestData.mismatch(try await first.body, slice(data, 0, 1_048_576)) == nil,
            "the first reader got wrong bytes"
        )
        #expect(
            TestData.mismatch(second.body, slice(data, 300_000, 748_576)) == nil,
            "the second reader got wrong bytes"
        )

        let replay = try await Curl.fetch(setup.url("r.bin"))
        #expect(TestData.mismatch(replay.body, data) == nil, "the cache kept a wrong byte")
    }
}

func slice(_ data: [UInt8], _ offset: Int, _ length: Int) -> [UInt8] {
    Array(data[offset..<min(data.count, offset + length)])
}

/// Readers of one file through `serve`, as players seek: 2–6 curl readers at random offsets,
/// started at random moments, against an origin with 0–1 s latency and 1–16 MB/s; every byte
/// compared, then a full replay from the cache compared.
@Suite(.timeLimit(.minutes(8))) struct RandomReadersThroughServeTests {
    struct Round: CustomTestStringConvertible, Sendable {
        let seed: UInt64
        var testDescription: String { "seed \(seed)" }
    }

    @Test(arguments: (1...4).map { Round(seed: $0) })
    func randomReadersGetTheOriginsBytes(round: Round) async throws {
        var random = SeededRandom(seed: round.seed)
        let rate = [1, 2, 4, 8, 16].randomElement(using: &random)!
        let latency = Int.random(in: 0...1000, using: &random)
        let setup = try await ProxySetup(originArguments: ["--rate", "\(rate)M", "--latency", "\(latency)"])
        defer { setup.remove() }
        let size = 3_000_000
        let data = TestData.bytes(count: size, seed: 200 + round.seed)
        try setup.workspace.write(data, as: "r.bin")
        let readers = (0..<Int.random(in: 2...6, using: &random)).map { _ in
            let first = Int.random(in: 0..<size, using: &random)
            let last =
                Bool.random(using: &random) ? nil : min(size - 1, first + Int.random(in: 0...1_500_000, using: &random))
            let delay = Int.random(in: 0...1500, using: &random)
            return (first, last, delay)
        }
        let label = "rate \(rate) MB/s, latency \(latency) ms, readers \(readers)"
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (first, last, delay) in readers {
                group.addTask {
                    try await Task.sleep(for: .milliseconds(delay))
                    let range = "bytes=\(first)-\(last.map(String.init) ?? "")"
                    let reply = try await Curl.fetch(setup.url("r.bin"), headers: ["Range: \(range)"])
                    let expected = data[first...(last ?? size - 1)]
                    let mismatch = TestData.mismatch(reply.body, expected)
                    #expect(mismatch == nil, "\(range) with \(label): \(mismatch ?? "")")
                }
            }
            try await group.waitForAll()
        }
        let replay = try await Curl.fetch(setup.url("r.bin"))
        let mismatch = TestData.mismatch(replay.body, data)
        #expect(mismatch == nil, "replay after \(label): \(mismatch ?? "")")
    }
}
