import Foundation
import StreamCache
import StreamCacheTesting
import Testing

/// An origin with neither ETag nor Last-Modified whose content changed at the same length: whole
/// reads returned the old bytes, then the new ones. RFC 9111 §3.4 lets a cache combine partial
/// responses only with matching strong validators; without them, ranges are combined only
/// within one revalidation of the resource.
@Suite(.timeLimit(.minutes(2))) struct WeakValidatorTests {
    let old = TestData.bytes(count: 600_000, seed: 550)
    let new = TestData.bytes(count: 600_000, seed: 551)

    /// Whether `bytes` are all of one version (and which), without printing a 600 KB diff.
    func version(of bytes: [UInt8]) -> String {
        if bytes == old { return "old" }
        if bytes == new { return "new" }
        return "mixed"
    }

    @Test func aNewProcessNeverMixesVersions() async throws {
        let fixture = try await EngineFixture.make(conditions: OriginConditions(faults: [.noValidators]))
        defer { Task { await fixture.tearDown() } }
        fixture.origin.setResource(old, at: "/a.mp3")
        let url = fixture.origin.url("/a.mp3")
        let first = try fixture.engine()
        #expect(try await readAll(first, url, length: 300_000) == Array(old[..<300_000]))
        await first.shutdown()

        fixture.origin.setResource(new, at: "/a.mp3")
        let second = try fixture.engine()
        #expect(version(of: try await readAll(second, url)) == "new")
        await second.shutdown()
    }

    @Test func oneEngineNeverMixesAcrossARevalidation() async throws {
        let fixture = try await EngineFixture.make(conditions: OriginConditions(faults: [.noValidators]))
        defer { Task { await fixture.tearDown() } }
        fixture.origin.setResource(old, at: "/a.mp3")
        let url = fixture.origin.url("/a.mp3")
        let engine = try fixture.engine { $0.revalidationInterval = .milliseconds(100) }
        #expect(try await readAll(engine, url, offset: 300_000) == Array(old[300_000...]))
        try await Task.sleep(for: .milliseconds(300))
        fixture.origin.setResource(new, at: "/a.mp3")
        #expect(version(of: try await readAll(engine, url)) == "new")
        // Complete now: it stays as it is (nothing left to combine).
        #expect(version(of: try await readAll(engine, url)) == "new")
        await engine.shutdown()
    }

    @Test func strongValidatorsStillCombineAcrossProcesses() async throws {
        let fixture = try await EngineFixture.make()
        defer { Task { await fixture.tearDown() } }
        fixture.origin.setResource(old, at: "/a.mp3")
        let url = fixture.origin.url("/a.mp3")
        let first = try fixture.engine()
        _ = try await readAll(first, url, length: 300_000)
        await first.shutdown()
        fixture.origin.resetStatistics()
        let second = try fixture.engine()
        #expect(version(of: try await readAll(second, url)) == "old")
        await second.shutdown()
        #expect(fixture.origin.statistics.bodyBytes < 300_100, "cached bytes were fetched again")
    }
}
