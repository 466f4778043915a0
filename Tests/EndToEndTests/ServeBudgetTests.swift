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
