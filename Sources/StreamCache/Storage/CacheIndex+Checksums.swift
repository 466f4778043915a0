import Foundation
import GRDB

extension CacheIndex {
    /// The block checksums of resource `id` (see ``BlockChecksums``).
    package func checksums(of id: Int64) async throws -> [Int64: UInt64] {
        try await read { db in
            let rows = try Row.fetchAll(
                db,
                sql: "SELECT block, checksum FROM blockChecksum WHERE resourceId = ?",
                arguments: [id]
            )
            return Dictionary(
                rows.map { ($0["block"] as Int64, UInt64(bitPattern: $0["checksum"] as Int64)) },
                uniquingKeysWith: { first, _ in first }
            )
        }
    }

    /// Forgets `blocks` of resource `id` (their bytes and checksums: read again, they do not
    /// match) and records the data file's `state`, in one transaction.
    ///
    /// - Returns: the ranges the index holds now, or `nil` if the resource is gone.
    @discardableResult
    package func forget(
        blocks: [Int64],
        of id: Int64,
        length: Int64?,
        state: DataFileState?
    ) async throws -> RangeSet? {
        try await write { db in
            guard try Self.fetchResource(db, id: id) != nil else { return nil }
            var ranges = try Self.fetchRanges(db, id: id)
            for block in blocks {
                ranges.remove(BlockChecksums.range(of: block, length: length))
                try db.execute(
                    sql: "DELETE FROM blockChecksum WHERE resourceId = ? AND block = ?",
                    arguments: [id, block]
                )
            }
            if !blocks.isEmpty { try Self.storeRanges(db, id: id, ranges: ranges) }
            if let state { try Self.storeFileState(db, id: id, state) }
            return ranges
        }
    }

    static func storeChecksums(_ db: Database, id: Int64, _ checksums: [Int64: UInt64]) throws {
        for (block, checksum) in checksums {
            try db.execute(
                sql: "INSERT OR REPLACE INTO blockChecksum (resourceId, block, checksum) VALUES (?, ?, ?)",
                arguments: [id, block, Int64(bitPattern: checksum)]
            )
        }
    }

    static func storeFileState(_ db: Database, id: Int64, _ state: DataFileState) throws {
        try db.execute(
            sql: "UPDATE resource SET fileSize = ?, fileModified = ? WHERE id = ?",
            arguments: [state.size, state.modified, id]
        )
    }
}
