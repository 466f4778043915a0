import Foundation

/// Checksums of data files, one per aligned block of ``size`` bytes whose every byte is
/// recorded, kept in the index with the ranges: a data file changed behind the cache's back
/// (overwritten, zeroed) is found by reading it again, and its bad blocks are fetched again.
///
/// The bytes of a range's partial first and last blocks have no checksum until the block fills.
package enum BlockChecksums {
    /// The bytes of one block.
    package static let size: Int64 = 1 << 20

    /// How a block's checksum is computed; the index keeps it beside each checksum, so sums an
    /// earlier version stored are still read by their own algorithm (never taken for damage).
    package enum Algorithm: Int, Sendable {
        /// Index schema 5 and before: one chain of steps.
        case serial = 1
        /// Four chains side by side, which a processor runs at once.
        case fourLanes = 2

        /// The algorithm new checksums are computed by.
        package static let current = Algorithm.fourLanes
    }

    /// A block's stored checksum and the algorithm that computed it.
    package struct Sum: Hashable, Sendable {
        package var value: UInt64
        package var algorithm: Algorithm
    }

    /// Bytes `[block × size, (block + 1) × size)`, cut at `length`.
    package static func range(of block: Int64, length: Int64?) -> ByteRange {
        let start = block * size
        return ByteRange(start, min(start + size, length ?? Int64.max))
    }

    /// The blocks that `added` completes: every byte in `recorded` (which holds `added`), and
    /// some in `added`. A block cut at the end counts once the length is known.
    static func completed(by added: ByteRangeSet, recorded: ByteRangeSet, length: Int64?) -> [Int64] {
        var blocks: [Int64] = []
        for range in added.ranges {
            var block = range.lowerBound / size
            while block * size < range.upperBound {
                let whole = self.range(of: block, length: length)
                if whole.count > 0, length != nil || whole.count == size, recorded.contains(whole),
                    blocks.last != block
                {
                    blocks.append(block)
                }
                block += 1
            }
        }
        return blocks
    }

    /// Reads `blocks` of `file` and sums them by `algorithm`, on a thread of their own if they
    /// hold more than 64 KiB (it may read megabytes); a short block ending a small resource is
    /// read where it is asked for, which costs less than the hop.
    ///
    /// - Returns: the checksum of each block that could be read whole.
    static func compute(
        _ blocks: [Int64],
        in file: CacheFile,
        length: Int64?,
        by algorithm: Algorithm = .current
    ) async -> [Int64: UInt64] {
        guard !blocks.isEmpty else { return [:] }
        if blocks.reduce(0, { $0 + range(of: $1, length: length).count }) <= 64 << 10 {
            return sums(of: blocks, in: file, length: length, by: algorithm)
        }
        return await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: sums(of: blocks, in: file, length: length, by: algorithm))
            }
        }
    }

    /// The checksummed blocks of `file` whose bytes no longer match `expected`, among those
    /// `recorded` still holds; read on a thread of their own.
    static func damaged(
        _ expected: [Int64: Sum],
        in file: CacheFile,
        recorded: ByteRangeSet,
        length: Int64?
    ) async -> [Int64] {
        let blocks = expected.keys.sorted().filter { recorded.contains(range(of: $0, length: length)) }
        var damaged: [Int64] = []
        for algorithm in Set(expected.values.map(\.algorithm)).sorted(by: { $0.rawValue < $1.rawValue }) {
            let summed = blocks.filter { expected[$0]?.algorithm == algorithm }
            let found = await compute(summed, in: file, length: length, by: algorithm)
            damaged += summed.filter { found[$0] != expected[$0]?.value }
        }
        return damaged.sorted()
    }

    private static let queue = DispatchQueue(label: "StreamCache.BlockChecksums", attributes: .concurrent)

    private static func sums(
        of blocks: [Int64],
        in file: CacheFile,
        length: Int64?,
        by algorithm: Algorithm
    ) -> [Int64: UInt64] {
        var sums: [Int64: UInt64] = [:]
        let largest = blocks.map { range(of: $0, length: length).count }.max() ?? 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(max(largest, 0)), alignment: 16)
        defer { buffer.deallocate() }
        for block in blocks {
            let range = range(of: block, length: length)
            let count = Int(range.count)
            let target = UnsafeMutableRawBufferPointer(rebasing: buffer[..<count])
            guard let read = try? file.read(into: target, at: range.lowerBound), read == count else { continue }
            sums[block] = checksum(UnsafeRawBufferPointer(target), by: algorithm)
        }
        return sums
    }

    /// A 64-bit checksum of `bytes` by `algorithm`. It finds accidents and tampering that does
    /// not know it, not a forger.
    package static func checksum(_ bytes: UnsafeRawBufferPointer, by algorithm: Algorithm = .current) -> UInt64 {
        switch algorithm {
        case .serial: serialChecksum(bytes)
        case .fourLanes: fourLaneChecksum(bytes)
        }
    }

    private static let prime: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// One step of either algorithm: `word` mixed into `hash` by a multiply and a shift.
    @inline(__always)
    private static func mix(_ hash: UInt64, _ word: UInt64) -> UInt64 {
        let product = (hash ^ word) &* prime
        return product ^ (product >> 29)
    }

    /// Eight bytes at a time in one chain, each step waiting for the one before.
    private static func serialChecksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash = prime ^ UInt64(bytes.count)
        let words = bytes.count / 8
        for index in 0..<words {
            hash = mix(hash, bytes.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))
        }
        for index in words * 8..<bytes.count {
            hash = mix(hash, UInt64(bytes[index]))
        }
        return hash
    }

    /// Thirty-two bytes at a time in four chains the processor runs side by side, folded into
    /// one at the end; the bytes after the last 32 go through the folded chain.
    private static func fourLaneChecksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var lanes = Lanes(count: bytes.count)
        let striped = bytes.count / 32 * 32
        lanes.add(stripes: UnsafeRawBufferPointer(rebasing: bytes[..<striped]))
        var hash = lanes.folded
        var offset = striped
        while offset + 8 <= bytes.count {
            hash = mix(hash, bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
        }
        for index in offset..<bytes.count {
            hash = mix(hash, UInt64(bytes[index]))
        }
        return hash
    }

    /// The four chains of ``Algorithm/fourLanes``, seeded by the count of bytes they will sum.
    private struct Lanes: Sendable {
        private var first: UInt64
        private var second: UInt64
        private var third: UInt64
        private var fourth: UInt64

        init(count: Int) {
            first = prime ^ UInt64(count)
            second = first &+ prime
            third = second &+ prime
            fourth = third &+ prime
        }

        /// Mixes in `bytes`, a whole number of 32-byte stripes.
        @inline(__always)
        mutating func add(stripes bytes: UnsafeRawBufferPointer) {
            for stripe in 0..<bytes.count / 32 {
                let offset = stripe * 32
                first = mix(first, bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                second = mix(second, bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
                third = mix(third, bytes.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self))
                fourth = mix(fourth, bytes.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self))
            }
        }

        var folded: UInt64 { mix(mix(mix(first, second), third), fourth) }
    }

    /// The checksum of one whole block by ``Algorithm/fourLanes`` (the current algorithm),
    /// summed as its bytes arrive in order, so a fetch's blocks need not be read back.
    package struct RunningSum: Sendable {
        /// The block summed.
        package let block: Int64
        private var lanes = Lanes(count: Int(BlockChecksums.size))
        /// The bytes of the block added so far.
        package private(set) var added: Int64 = 0
        /// The last bytes added that do not fill a stripe yet.
        private var pending: [UInt8] = []

        package init(block: Int64) {
            self.block = block
        }

        /// Where the next byte to add lies in the resource.
        package var position: Int64 { block * BlockChecksums.size + added }

        /// The checksum, once every byte of the block is added.
        package var sum: UInt64? { added == BlockChecksums.size ? lanes.folded : nil }

        /// Adds `bytes`, which follow those added so far and do not pass the block's end.
        package mutating func add(_ bytes: UnsafeRawBufferPointer) {
            precondition(added + Int64(bytes.count) <= BlockChecksums.size, "bytes past the block's end")
            added += Int64(bytes.count)
            var rest = bytes
            if !pending.isEmpty {
                let taken = min(32 - pending.count, rest.count)
                pending += rest[..<taken]
                rest = UnsafeRawBufferPointer(rebasing: rest[taken...])
                guard pending.count == 32 else { return }
                pending.withUnsafeBytes { lanes.add(stripes: $0) }
                pending.removeAll(keepingCapacity: true)
            }
            let striped = rest.count / 32 * 32
            lanes.add(stripes: UnsafeRawBufferPointer(rebasing: rest[..<striped]))
            pending += rest[striped...]
        }
    }
}
