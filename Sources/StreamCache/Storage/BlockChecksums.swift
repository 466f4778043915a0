import Foundation

/// Checksums of data files, one per aligned block of ``size`` bytes whose every byte is
/// recorded, kept in the index with the ranges: a data file changed behind the cache's back
/// (overwritten, zeroed) is found by reading it again, and its bad blocks are fetched again.
///
/// The bytes of a range's partial first and last blocks have no checksum until the block fills.
package enum BlockChecksums {
    /// The bytes of one block.
    package static let size: Int64 = 1 << 20

    /// Bytes `[block × size, (block + 1) × size)`, cut at `length`.
    package static func range(of block: Int64, length: Int64?) -> ByteRange {
        let start = block * size
        return ByteRange(start, min(start + size, length ?? Int64.max))
    }

    /// The blocks that `added` completes: every byte in `recorded` (which holds `added`), and
    /// some in `added`. A block cut at the end counts once the length is known.
    static func completed(by added: RangeSet, recorded: RangeSet, length: Int64?) -> [Int64] {
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

    /// Reads `blocks` of `file` and sums them, on a thread of their own (it may read megabytes).
    ///
    /// - Returns: the checksum of each block that could be read whole.
    static func compute(_ blocks: [Int64], in file: CacheFile, length: Int64?) async -> [Int64: UInt64] {
        guard !blocks.isEmpty else { return [:] }
        return await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: sums(of: blocks, in: file, length: length)) }
        }
    }

    /// The checksummed blocks of `file` whose bytes no longer match `expected`, among those
    /// `recorded` still holds; read on a thread of their own.
    static func damaged(
        _ expected: [Int64: UInt64],
        in file: CacheFile,
        recorded: RangeSet,
        length: Int64?
    ) async -> [Int64] {
        let blocks = expected.keys.sorted().filter { recorded.contains(range(of: $0, length: length)) }
        let found = await compute(blocks, in: file, length: length)
        return blocks.filter { found[$0] != expected[$0] }
    }

    private static let queue = DispatchQueue(label: "StreamCache.BlockChecksums", attributes: .concurrent)

    private static func sums(of blocks: [Int64], in file: CacheFile, length: Int64?) -> [Int64: UInt64] {
        var sums: [Int64: UInt64] = [:]
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(size), alignment: 16)
        defer { buffer.deallocate() }
        for block in blocks {
            let range = range(of: block, length: length)
            let count = Int(range.count)
            let target = UnsafeMutableRawBufferPointer(rebasing: buffer[..<count])
            guard let read = try? file.read(into: target, at: range.lowerBound), read == count else { continue }
            sums[block] = checksum(UnsafeRawBufferPointer(target))
        }
        return sums
    }

    /// A 64-bit checksum of `bytes`: eight bytes at a time, each mixed by a multiply and a
    /// shift. It finds accidents and tampering that does not know it, not a forger.
    package static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let prime: UInt64 = 0x9E37_79B9_7F4A_7C15
        var hash = prime ^ UInt64(bytes.count)
        let words = bytes.count / 8
        for index in 0..<words {
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)) &* prime
            hash ^= hash >> 29
        }
        for index in words * 8..<bytes.count {
            hash = (hash ^ UInt64(bytes[index])) &* prime
            hash ^= hash >> 29
        }
        return hash
    }
}
