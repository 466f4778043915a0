import Foundation
import GRDB
import StreamCacheTesting
import Testing

@testable import StreamCache

/// The index's running total of cached bytes (kept by triggers) against the sum of its rows,
/// through every change the engine makes, and for an index made before the total existed.
@Suite struct CacheTotalsTests {
    private static func sum(_ index: CacheIndex) async throws -> Int64 {
        try await index.read { db in
            try Int64.fetchOne(db, sql: "SELECT COALESCE(SUM(cachedBytes), 0) FROM resource") ?? 0
        }
    }

    @Test func theTotalFollowsEveryChange() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("totals-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let index = try CacheIndex(path: folder.appendingPathComponent("index.sqlite").path)
        var random = SeededRandom(seed: 27)
        var ids: [Int64] = []
        for step in 0..<300 {
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                let record = try await index.resource(
                    forKey: "k\(step)",
                    creatingWithURL: "https://example.com/\(step)"
                )
                ids.append(record.id)
            case 1 where !ids.isEmpty:
                let start = Int64.random(in: 0..<1000, using: &random)
                let ranges = ByteRangeSet([ByteRange(start, start + Int64.random(in: 1...5000, using: &random))])
                try await index.setRanges(ranges, of: ids.randomElement(using: &random)!)
            case 2 where !ids.isEmpty:
                let id = ids.remove(at: Int.random(in: 0..<ids.count, using: &random))
                try await index.delete(id: id)
            case 3 where !ids.isEmpty:
                let position = Int.random(in: 0..<ids.count, using: &random)
                guard let old = try await index.resource(id: ids[position]) else { break }
                ids[position] = try await index.replaceVersion(
                    of: old.id,
                    key: old.key,
                    url: old.url,
                    info: ContentInfo()
                ).id
            default:
                break
            }
            let total = try await index.totalCachedBytes()
            let expected = try await Self.sum(index)
            #expect(total == expected, "step \(step)")
            if total != expected { return }
        }
    }

    @Test func anIndexFromBeforeTheTotalGetsItsSum() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("totals-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("index.sqlite").path
        do {
            let index = try CacheIndex(path: path)
            for step in 0..<5 {
                let record = try await index.resource(
                    forKey: "k\(step)",
                    creatingWithURL: "https://example.com/\(step)"
                )
                try await index.setRanges(ByteRangeSet([ByteRange(0, Int64(1000 * (step + 1)))]), of: record.id)
            }
            // As version 4 left it: no total, no triggers.
            try await index.write { db in
                try db.execute(
                    sql: """
                        DROP TRIGGER resource_added; DROP TRIGGER resource_removed; DROP TRIGGER resource_resized;
                        DROP TABLE cacheTotals; PRAGMA user_version = 4;
                        """
                )
            }
        }
        let index = try CacheIndex(path: path)
        #expect(try await index.totalCachedBytes() == 15_000)
        let record = try await index.resource(forKey: "k9", creatingWithURL: "https://example.com/9")
        try await index.setRanges(ByteRangeSet([ByteRange(0, 500)]), of: record.id)
        #expect(try await index.totalCachedBytes() == 15_500)
    }
}
