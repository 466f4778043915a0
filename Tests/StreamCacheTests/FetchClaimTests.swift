import Foundation
import GRDB
import StreamCacheTesting
import Testing

@testable import StreamCache

/// Claims in the index as two engines on one cache directory see them: a fetch's claim keeps
/// the other engine off its bytes while its batches are recorded, and its last batch ends it in
/// the same transaction, so the other may fetch what it did not.
@Suite struct FetchClaimTests {
    /// The indexes of two engines on one scratch database in `folder`.
    func twoEngines(in folder: String) throws -> (CacheIndex, CacheIndex) {
        let path = folder + "/index.sqlite"
        return (try CacheIndex(path: path), try CacheIndex(path: path))
    }

    /// How engine `owner` claims, every other engine alive.
    func rules(_ owner: String) -> CacheIndex.ClaimRules {
        CacheIndex.ClaimRules(owner: owner, isAlive: { _ in true }, staleAfter: 60)
    }

    @Test func aFetchsLastBatchEndsItsClaimWithItsBytes() async throws {
        let folder = TestData.temporaryDirectory("claims")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (first, second) = try twoEngines(in: folder)
        let id = try await first.resource(forKey: "k", creatingWithURL: "https://example.com/a.ts").id

        let (granted, _) = try await first.claim(resource: id, fetch: 1, first: 0, last: 9_999, rules: rules("a"))
        #expect(granted == .some(9_999))
        // A batch in the middle moves the claim on: the other engine still may not fetch its rest.
        try await first.addRanges(ByteRangeSet([ByteRange(0, 4_000)]), to: id, advancing: 1, to: 4_000, owner: "a")
        let (refused, seen) = try await second.claim(
            resource: id,
            fetch: 1,
            first: 4_000,
            last: 9_999,
            rules: rules("b")
        )
        #expect(refused == nil)
        #expect(seen.foreign == ByteRangeSet([ByteRange(4_000, 10_000)]))

        // The fetch stops at 6,000 (its player left); its last batch ends the claim.
        let recorded = try await first.addRanges(
            ByteRangeSet([ByteRange(4_000, 6_000)]),
            to: id,
            advancing: 1,
            to: nil,
            owner: "a"
        )
        #expect(recorded)
        let (rest, state) = try await second.claim(resource: id, fetch: 1, first: 6_000, last: 9_999, rules: rules("b"))
        #expect(rest == .some(9_999))
        #expect(state.recorded == ByteRangeSet([ByteRange(0, 6_000)]) && state.foreign.isEmpty)
    }

    /// A reader of one engine waiting for the other's whole-body stream says so (a want): the
    /// streaming engine sees it while it stands, the waiting one does not see its own, and it
    /// claims no byte (the stream's engine and any other may still claim and record).
    @Test func aWantIsSeenByTheOtherEngineWhileItStandsAndClaimsNothing() async throws {
        let folder = TestData.temporaryDirectory("claims")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (streaming, waiting) = try twoEngines(in: folder)
        let id = try await streaming.resource(forKey: "k", creatingWithURL: "https://example.com/ep.mp3").id
        _ = try await streaming.claimRest(resource: id, fetch: 1, from: 0, rules: rules("a"))
        #expect(try await streaming.sharedState(of: id, rules: rules("a"), withHead: false).othersWantStream == false)

        try await waiting.want(resource: id, from: 500_000, owner: "b")
        // Judged by an engine for which wants stand a minute (a loaded test run may take seconds).
        let standing = CacheIndex.ClaimRules(owner: "a", isAlive: { _ in true }, staleAfter: 60, wantStandsFor: 60)
        let seen = try await streaming.sharedState(of: id, rules: standing, withHead: false)
        #expect(seen.othersWantStream)
        #expect(seen.foreign.isEmpty && seen.foreignStream == nil, "a want claimed bytes: \(seen.foreign)")
        let own = try await waiting.sharedState(of: id, rules: rules("b"), withHead: false)
        #expect(!own.othersWantStream && own.foreignStream == 0)
        // By one for which they stand no time at all: it has lapsed.
        let noStanding = CacheIndex.ClaimRules(owner: "a", isAlive: { _ in true }, staleAfter: 60, wantStandsFor: 0)
        #expect(try await streaming.sharedState(of: id, rules: noStanding, withHead: false).othersWantStream == false)

        // The stream ended: the bytes the want waits at are free to claim.
        try await streaming.releaseClaim(resource: id, owner: "a", fetch: 1)
        let (granted, _) = try await waiting.claim(
            resource: id,
            fetch: 1,
            first: 400_000,
            last: 599_999,
            rules: rules("c")
        )
        #expect(granted == .some(599_999))
    }

    /// An engine that opened a row before another stored the origin's head learns the length
    /// from its next claim, so it does not ask the origin past the end.
    @Test func aClaimTellsTheHeadAnotherEngineStored() async throws {
        let folder = TestData.temporaryDirectory("claims")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (first, second) = try twoEngines(in: folder)
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

    /// Fetch numbers count per resource, so one engine has a fetch 1 on every resource it reads:
    /// its claims on two resources are two claims, and ending one leaves the other (they were
    /// one row, and an HLS download fetching segments at once let `serve` fetch them too).
    @Test func anEnginesClaimsOnTwoResourcesAreKeptApart() async throws {
        let folder = TestData.temporaryDirectory("claims")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (first, second) = try twoEngines(in: folder)
        let one = try await first.resource(forKey: "one", creatingWithURL: "https://example.com/1.ts").id
        let two = try await first.resource(forKey: "two", creatingWithURL: "https://example.com/2.ts").id

        _ = try await first.claim(resource: one, fetch: 1, first: 0, last: 9_999, rules: rules("a"))
        _ = try await first.claim(resource: two, fetch: 1, first: 0, last: 4_999, rules: rules("a"))
        let (onOne, seenOne) = try await second.claim(resource: one, fetch: 1, first: 0, last: 9_999, rules: rules("b"))
        #expect(onOne == nil, "the claim on the first resource went with the claim on the second")
        #expect(seenOne.foreign == ByteRangeSet([ByteRange(0, 10_000)]))

        // The fetch of the second resource ends with its bytes; the first one's claim stays.
        try await first.addRanges(ByteRangeSet([ByteRange(0, 5_000)]), to: two, advancing: 1, to: nil, owner: "a")
        let (stillRefused, _) = try await second.claim(
            resource: one,
            fetch: 1,
            first: 0,
            last: 9_999,
            rules: rules("b")
        )
        #expect(stillRefused == nil, "ending the claim on the second resource ended the first one's")
        let (onTwo, _) = try await second.claim(resource: two, fetch: 1, first: 5_000, last: nil, rules: rules("b"))
        #expect(onTwo == .some(nil))
    }

    /// An index from before version 7 kept claims by engine and fetch alone: its claims table
    /// is made anew (claims only describe fetches in flight), and claims on two resources are
    /// kept apart.
    @Test func anIndexFromBeforeGetsClaimsByResource() async throws {
        let folder = TestData.temporaryDirectory("claims")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/index.sqlite"
        // An index as version 6 left it: this code's tables, but claims keyed by engine and fetch.
        _ = try CacheIndex(path: path)
        let old = try DatabaseQueue(path: path)
        try await old.write { db in
            try db.execute(
                sql: """
                    DROP TABLE fetchClaim;
                    CREATE TABLE fetchClaim (
                        resourceId INTEGER NOT NULL REFERENCES resource(id) ON DELETE CASCADE,
                        owner TEXT NOT NULL, fetch INTEGER NOT NULL, start INTEGER NOT NULL, "end" INTEGER,
                        heartbeat REAL NOT NULL, PRIMARY KEY (owner, fetch));
                    CREATE INDEX fetchClaim_resource ON fetchClaim(resourceId);
                    INSERT INTO resource (key, url, createdAt, lastAccess)
                        VALUES ('old', 'https://example.com/o', 0, 0);
                    INSERT INTO fetchClaim VALUES (1, 'gone', 1, 0, 100, 0);
                    PRAGMA user_version = 6;
                    """
            )
        }
        try old.close()

        let (first, second) = try twoEngines(in: folder)
        let one = try await first.resource(forKey: "one", creatingWithURL: "https://example.com/1.ts").id
        let two = try await first.resource(forKey: "two", creatingWithURL: "https://example.com/2.ts").id
        _ = try await first.claim(resource: one, fetch: 1, first: 0, last: 9_999, rules: rules("a"))
        _ = try await first.claim(resource: two, fetch: 1, first: 0, last: 9_999, rules: rules("a"))
        let (onOne, _) = try await second.claim(resource: one, fetch: 1, first: 0, last: 9_999, rules: rules("b"))
        #expect(onOne == nil)
    }
}
