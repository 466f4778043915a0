import Foundation
import StreamCacheTesting
import Testing

@testable import StreamCache

/// The event loop's read of the index (``CacheIndex/resourceNow(forKey:)``), on connections of
/// its own: it sees every commit at once, this process's and another's, reads the same as the
/// pool, and leaves the index's files as the other connections expect them.
@Suite struct IndexLookupTests {
    @Test func theLookupSeesEveryCommitAndReadsWhatThePoolReads() async throws {
        let folder = TestData.temporaryDirectory("lookups")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/index.sqlite"
        let index = try CacheIndex(path: path)
        #expect(index.resourceNow(forKey: "missing") == nil)

        let created = try await index.resource(forKey: "k", creatingWithURL: "https://example.com/a.ts")
        let stored = StoredFields(fields: [HeaderField("Cache-Control", "max-age=60")], receivedAt: 1_800_000_000)
        let info = ContentInfo(length: 10_000, contentType: "video/mp2t", etag: "\"e\"", stored: stored)
        try await index.update(id: created.id, info: info)
        let ranges = ByteRangeSet([ByteRange(5_000, 6_000), ByteRange(0, 1_000), ByteRange(8_000, 10_000)])
        try await index.setRanges(ranges, of: created.id)
        let (record, recorded) = try #require(index.resourceNow(forKey: "k"))
        #expect(recorded == ranges)
        let pooled = try #require(try await index.resource(forKey: "k"))
        #expect(record.id == pooled.id && record.url == pooled.url && record.info == pooled.info)
        #expect(record.info == info && record.createdAt == pooled.createdAt && record.pinned == pooled.pinned)

        // Another process's commit (another index on the same file), seen by the next lookup.
        let other = try CacheIndex(path: path)
        try await other.setRanges(ByteRangeSet([ByteRange(0, 10_000)]), of: created.id)
        #expect(index.resourceNow(forKey: "k")?.1 == ByteRangeSet([ByteRange(0, 10_000)]))
        try await other.delete(id: created.id)
        #expect(index.resourceNow(forKey: "k") == nil)

        // Threads reading at once each get the whole answer.
        let again = try await index.resource(forKey: "k2", creatingWithURL: "https://example.com/b.ts")
        try await index.setRanges(ranges, of: again.id)
        let answers = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<200).allSatisfy { _ in index.resourceNow(forKey: "k2")?.1 == ranges } }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(answers == Array(repeating: true, count: 8))
        // The WAL files stay for the next process (the index keeps them on a full disk).
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
    }
}
