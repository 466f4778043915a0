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

    /// A block summed as it arrives, in pieces of any size, has the sum of the block read whole.
    /// Summing a block byte by byte is ``HeavyWork``; it returns what went wrong.
    @Test func aBlockSummedPieceByPieceHasTheSumOfTheWholeBlock() async {
        let problems = await HeavyWork.run(priority: .normal) {
            let block = TestData.bytes(count: Int(BlockChecksums.size), seed: 33)
            let whole = block.withUnsafeBytes { BlockChecksums.checksum($0, by: .current) }
            var generator = SeededRandom(seed: 34)
            var problems: [String] = []
            for maximum in [1, 31, 33, 4096, 700_000] {
                var running = BlockChecksums.RunningSum(block: 5)
                var offset = 0
                while offset < block.count {
                    let count = min(Int.random(in: 1...maximum, using: &generator), block.count - offset)
                    block.withUnsafeBytes { running.add(UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count])) }
                    offset += count
                    if (running.sum != nil) != (offset == block.count) {
                        problems.append("pieces of at most \(maximum) bytes: a sum at \(offset)")
                    }
                }
                if running.sum != whole { problems.append("pieces of at most \(maximum) bytes: another sum") }
                if running.position != 6 * BlockChecksums.size { problems.append("position \(running.position)") }
            }
            return problems
        }
        #expect(problems.isEmpty, "\(problems.prefix(3))")
    }

    /// A session sums the blocks a fetch writes whole, in order; a block it writes in part, or
    /// out of order, or of another version, is left to be read back.
    @Test func onlyBlocksAFetchWroteWholeAndInOrderAreSummedAsWritten() {
        let size = Int(BlockChecksums.size)
        let data = TestData.bytes(count: 4 * size, seed: 35)
        let sums = (0..<4).map { block in
            data.withUnsafeBytes {
                BlockChecksums.checksum(UnsafeRawBufferPointer(rebasing: $0[block * size..<(block + 1) * size]))
            }
        }
        // As a session does: the fetch's progress out, summed beside the write, and kept.
        func write(_ sums: inout FetchedBlockSums, _ range: Range<Int>, fetch: Int, generation: Int = 1) {
            var progress = sums.progress(of: fetch, generation: generation)
            data.withUnsafeBytes {
                progress.add(UnsafeRawBufferPointer(rebasing: $0[range]), at: Int64(range.lowerBound))
            }
            sums.wrote(progress, fetch: fetch, generation: generation)
        }
        var fetched = FetchedBlockSums()
        // Fetch 1 from the start in uneven pieces; fetch 2 from inside block 2, interleaved.
        write(&fetched, 0..<300_000, fetch: 1)
        write(&fetched, 2 * size + 10..<3 * size + 5, fetch: 2)
        write(&fetched, 300_000..<size + 7, fetch: 1)
        write(&fetched, 3 * size + 5..<4 * size, fetch: 2)
        write(&fetched, size + 7..<2 * size, fetch: 1)
        #expect(fetched.take([0, 1, 2, 3], generation: 1) == [0: sums[0], 1: sums[1], 3: sums[3]])
        #expect(fetched.take([0, 1, 3], generation: 1).isEmpty, "a sum was taken twice")

        // A gap in a fetch's writes: its block is read back.
        var gapped = FetchedBlockSums()
        write(&gapped, 0..<1000, fetch: 1)
        write(&gapped, 2000..<size, fetch: 1)
        #expect(gapped.take([0], generation: 1).isEmpty)
        // Sums of another version are not taken.
        var replaced = FetchedBlockSums()
        write(&replaced, 0..<size, fetch: 1, generation: 1)
        #expect(replaced.take([0], generation: 2).isEmpty)
        write(&replaced, size..<2 * size, fetch: 1, generation: 2)
        #expect(replaced.take([0, 1], generation: 2) == [1: sums[1]])
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
