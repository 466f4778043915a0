import Foundation
import StreamCacheTesting
import Testing

/// `serve --max-size 50M` kept all 64 MB of a file played through it: the idle session still
/// held its file lock when eviction wanted an exclusive one.
@Suite(.timeLimit(.minutes(2))) struct ServeBudgetTests {
    struct Listed: Decodable { let cachedBytes: Int64 }

    @Test func aResourceOverTheBudgetIsCutOnceItsPlayerLeaves() async throws {
        let setup = try await ProxySetup(proxyArguments: ["--max-size", "1M"])
        defer { setup.remove() }
        let data = TestData.bytes(count: 3_000_000, seed: 560)
        try setup.workspace.write(data, as: "big.bin")
        let whole = try await Curl.fetch(setup.url("big.bin"))
        #expect(whole.status == 200 && whole.body.count == data.count)
        // The session lingers 2 s after its last reader, then closes and the budget applies.
        var total: Int64 = .max
        for _ in 0..<20 where total > 1 << 20 {
            try await Task.sleep(for: .milliseconds(500))
            let listed = try await CLI.run(["ls", "--json"], cacheDir: setup.workspace.cacheDirectory)
            total = try JSONDecoder().decode(ListingOf<Listed>.self, from: listed.stdout).resources.reduce(0) {
                $0 + $1.cachedBytes
            }
        }
        #expect(total <= 1 << 20, "serve keeps \(total) bytes over a 1 MiB budget")
        #expect(total > 0, "the first bytes within the budget stay cached")
        // What is kept still plays, and the rest comes from the origin again.
        let again = try await Curl.fetch(setup.url("big.bin"))
        #expect(again.status == 200 && [UInt8](again.body) == data)
    }
}

/// A read that goes on straight from the origin (here: the resource outgrew the whole budget)
/// moves at its player's pace: the origin is read no faster than the player takes the bytes,
/// and `serve`'s memory stays flat, however fast the origin.
@Suite(.timeLimit(.minutes(2))) struct PassThroughPaceTests {
    @Test(.enabled(if: LinuxTools.proc, "reads a process's peak memory from /proc"))
    func aSlowPlayerSlowsTheOriginReadInsteadOfFillingMemory() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await ScriptedOrigin(["/endless": ["status": 200, "endless": true]], in: workspace)
        let proxy = try await ListeningProcess(["serve", "--max-size", "20M"], cacheDir: workspace.cacheDirectory)
        // A player at 2 MB/s for 8 s; past the budget's first 20 MB it is read uncached.
        let player = try await Tool.run(
            "curl",
            [
                "-s", "--limit-rate", "2M", "--max-time", "8", "-o", "/dev/null", "-w", "%{size_download}",
                proxy.url(origin.url("endless")),
            ]
        )
        let received = Int64(player.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        let sent = try await origin.endlessBytes()
        // What the player took, what the cache kept (the budget) and what the buffers on the way
        // hold (about 50 MB with loopback's autotuning, 79 MB seen in a loaded test run); before,
        // the origin was read as fast as it sends (0.4-1.6 GB in those 8 s).
        #expect(received > 4 << 20, "the player got \(received) bytes")
        #expect(sent <= received + (20 << 20) + (96 << 20), "the origin sent \(sent) bytes for \(received) taken")
        let peak = try residentPeak(of: proxy.process)
        #expect(peak < 200 << 20, "serve's resident memory peaked at \(peak) bytes")
        try await proxy.stop()
    }

    /// `VmHWM` of a running process, in bytes.
    private func residentPeak(of process: ChildProcess) throws -> Int64 {
        let status = try String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        return (Int64(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
}
