import Foundation
import GRDB
import StreamCacheTesting
import Testing

@testable import StreamCache

/// Block checksums: each algorithm notices a changed byte wherever it is, and sums an earlier
/// version stored (one serial chain) are still read by their own algorithm.
@Suite(.timeLimit(.minutes(2))) struct BlockChecksumTests {
    @Test(arguments: [BlockChecksums.Algorithm.serial, .fourLanes])
    func aChangedByteOrLengthChangesTheSum(_ algorithm: BlockChecksums.Algorithm) {
        let data = TestData.bytes(count: 1000, seed: 31)
        let sum = { (bytes: [UInt8]) in bytes.withUnsafeBytes { BlockChecksums.checksum($0, by: algorithm) } }
        let original = sum(data)
        // In each of the four lanes of a stripe, in the words after the last stripe, in the last bytes.
        for offset in [0, 9, 17, 25, 31, 500, 968, 990, 999] {
            var changed = data
            changed[offset] ^= 0x01
            #expect(sum(changed) != original, "a change at \(offset) kept the sum")
        }
        #expect(sum(Array(data.dropLast())) != original)
        #expect(sum(data + [0]) != original)
        // Words swapped between lanes.
        var swapped = data
        swapped.swapAt(0, 8)
        #expect(data[0] == data[8] || sum(swapped) != original)
    }

    @Test func sumsStoredByTheSerialAlgorithmAreStillCheckedByIt() async throws {
        let fixture = try await EngineFixture.make()
        let data = TestData.bytes(count: 3 * 1_048_576, seed: 32)
        fixture.origin.setResource(data, at: "/a.bin")
        let url = fixture.origin.url("/a.bin")
        let filler = try fixture.engine()
        #expect(try await readAll(filler, url) == data)
        await filler.shutdown()

        let key = filler.configuration.key(url)
        let id: Int64
        do {
            let engine = try fixture.engine()
            let record = try #require(try await engine.index.resource(forKey: key))
            let stored = try await engine.index.checksums(of: record.id)
            #expect(stored.count == 3 && stored.values.allSatisfy { $0.algorithm == .current })
            id = record.id
            await engine.shutdown()
        }
        // The index as schema 5 left it: serial sums in a table with no algorithm column.
        let serial = data.withUnsafeBytes { bytes in
            (0..<3).map { block in
                let whole = UnsafeRawBufferPointer(rebasing: bytes[block * 1_048_576..<(block + 1) * 1_048_576])
                return BlockChecksums.checksum(whole, by: .serial)
            }
        }
        let database = try DatabaseQueue(path: fixture.directory.indexPath)
        try await database.write { db in
            try db.execute(sql: "ALTER TABLE blockChecksum DROP COLUMN algorithm")
            for (block, sum) in serial.enumerated() {
                try db.execute(
                    sql: "UPDATE blockChecksum SET checksum = ? WHERE resourceId = ? AND block = ?",
                    arguments: [Int64(bitPattern: sum), id, block]
                )
            }
            try db.execute(sql: "PRAGMA user_version = 5")
        }
        try database.close()

        let engine = try fixture.engine()
        let clean = try await engine.verify()
        #expect(clean.checkedBytes == Int64(data.count) && clean.damaged.isEmpty, "\(clean)")

        let path = fixture.directory.dataPath(id: id)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seek(toOffset: 1_500_000)
        try handle.write(contentsOf: Data([0xFF ^ data[1_500_000]]))
        try handle.close()
        let damaged = try await engine.verify()
        #expect(damaged.damaged.map(\.bytes) == [1_048_576], "\(damaged)")
        #expect(try await readAll(engine, url) == data)
        await engine.shutdown()
        await fixture.tearDown()
    }
}
