import Foundation
import StreamCacheTesting
import Testing

@testable import StreamCache

/// Claims in the index as two engines on one cache directory see them: a fetch's claim keeps
/// the other engine off its bytes while its batches are recorded, and its last batch ends it in
/// the same transaction, so the other may fetch what it did not.
@Suite struct FetchClaimTests {
    @Test func aFetchsLastBatchEndsItsClaimWithItsBytes() async throws {
        let folder = TestData.temporaryDirectory("claims")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/index.sqlite"
        let first = try CacheIndex(path: path)
        let second = try CacheIndex(path: path)
        let rules = { (owner: String) in CacheIndex.ClaimRules(owner: owner, isAlive: { _ in true }, staleAfter: 60) }
        let id = try await first.resource(forKey: "k", creatingWithURL: "https://example.com/a.ts").id

        let (granted, _) = try await first.claim(resource: id, fetch: 1, first: 0, last: 9_999, rules: rules("a"))
        #expect(granted == .some(9_999))
        // A batch in the middle moves the claim on: the other engine still may not fetch its rest.
        try await first.addRanges(RangeSet([ByteRange(0, 4_000)]), to: id, advancing: 1, to: 4_000, owner: "a")
        let (refused, seen) = try await second.claim(resource: id, fetch: 1, first: 4_000, last: 9_999, rules: rules("b"))
        #expect(refused == nil)
        #expect(seen.foreign == RangeSet([ByteRange(4_000, 10_000)]))

        // The fetch stops at 6,000 (its player left); its last batch ends the claim.
        let recorded = try await first.addRanges(
            RangeSet([ByteRange(4_000, 6_000)]),
            to: id,
            advancing: 1,
            to: nil,
            owner: "a"
        )
        #expect(recorded)
        let (rest, state) = try await second.claim(resource: id, fetch: 1, first: 6_000, last: 9_999, rules: rules("b"))
        #expect(rest == .some(9_999))
        #expect(state.recorded == RangeSet([ByteRange(0, 6_000)]) && state.foreign.isEmpty)
    }

    /// An engine that opened a row before another stored the origin's head learns the length
    /// from its next claim, so it does not ask the origin past the end.
    @Test func aClaimTellsTheHeadAnotherEngineStored() async throws {
        let folder = TestData.temporaryDirectory("claims")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/index.sqlite"
        let first = try CacheIndex(path: path)
        let second = try CacheIndex(path: path)
        let rules = { (owner: String) in CacheIndex.ClaimRules(owner: owner, isAlive: { _ in true }, staleAfter: 60) }
        let id = try await first.resource(forKey: "k", creatingWithURL: "https://example.com/seg.ts").id

        _ = try await first.claim(resource: id, fetch: 1, first: 0, last: 1_048_575, rules: rules("a"))
        let (_, before) = try await second.claim(resource: id, fetch: 1, first: 0, last: nil, rules: rules("b"))
        #expect(before.info == nil, "no head stored yet")

        let head = ContentInfo(length: 800_000, contentType: "video/mp2t", etag: "\"v1\"", byteRangeAccess: true)
        try await first.update(id: id, info: head)
        let (_, after) = try await second.claim(resource: id, fetch: 1, first: 0, last: nil, rules: rules("b"))
        #expect(after.info?.length == 800_000)
        #expect(after.info?.etag == "\"v1\"")
    }
}
