import Foundation
import GRDB

extension CacheIndex {
    /// The block checksums of resource `id` (see ``BlockChecksums``).
    /// A checksum by an algorithm this code does not know is left out: its block is read
    /// unchecked, as a block not yet summed is.
    package func checksums(of id: Int64) async throws -> [Int64: BlockChecksums.Sum] {
        try await read { db in
            let rows = try Row.fetchAll(
                db,
                sql: "SELECT block, checksum, algorithm FROM blockChecksum WHERE resourceId = ?",
                arguments: [id]
            )
            let sums = rows.compactMap { row -> (Int64, BlockChecksums.Sum)? in
                guard let block = row.integer(0), let checksum = row.integer(1),
                    let algorithm = row.integer(2).flatMap({ BlockChecksums.Algorithm(rawValue: Int($0)) })
                else { return nil }
                return (block, .init(value: UInt64(bitPattern: checksum), algorithm: algorithm))
            }
            return Dictionary(sums, uniquingKeysWith: { first, _ in first })
        }
    }

    /// What ``check(_:of:length:holding:state:)`` found.
    package struct BlockCheck: Sendable {
        /// The ranges still present: those held, less the bad blocks.
        package var kept: ByteRangeSet
        package var bad: [Int64]
        /// The bytes read against a checksum.
        package var checkedBytes: Int64
    }

    /// Reads the checksummed blocks of `file` that `present` holds and forgets those that do not
    /// match, so they are fetched again; records the file's `state` as seen.
    ///
    /// - Throws: ``StreamCacheError`` `index` if the checksums cannot be read or the index written.
    package func check(
        _ file: CacheFile,
        of id: Int64,
        length: Int64?,
        holding present: ByteRangeSet,
        state: DataFileState
    ) async throws -> BlockCheck {
        let sums = try await checksums(of: id)
        let checked = sums.keys.map { BlockChecksums.range(of: $0, length: length) }.filter(present.contains)
        let bad = await BlockChecksums.damaged(sums, in: file, recorded: present, length: length)
        var kept = present
        for block in bad { kept.remove(BlockChecksums.range(of: block, length: length)) }
        try await forget(blocks: bad, of: id, length: length, state: state)
        return BlockCheck(kept: kept, bad: bad, checkedBytes: checked.reduce(0) { $0 + $1.count })
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
    ) async throws -> ByteRangeSet? {
        try await write { db in
            guard try Self.exists(db, id: id) else { return nil }
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

    /// Stores `checksums`, computed by `algorithm`, of resource `id`'s blocks.
    static func storeChecksums(
        _ db: Database,
        id: Int64,
        _ checksums: [Int64: UInt64],
        by algorithm: BlockChecksums.Algorithm = .current
    ) throws {
        for (block, checksum) in checksums {
            try run(
                db,
                "INSERT OR REPLACE INTO blockChecksum (resourceId, block, checksum, algorithm) VALUES (?, ?, ?, ?)",
                [id, block, Int64(bitPattern: checksum), algorithm.rawValue]
            )
        }
    }

    static func storeFileState(_ db: Database, id: Int64, _ state: DataFileState) throws {
        try run(
            db,
            "UPDATE resource SET fileSize = ?, fileModified = ? WHERE id = ?",
            [state.size, state.modified, id]
        )
    }
}
