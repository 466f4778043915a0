import Foundation

extension ResourceSession {
    /// The first bytes of `range`, read from the file and checked against their block's checksum,
    /// for a file something else changed since this session last left it (``CacheFile/isTrusted(_:)``):
    /// at most one block's worth, in memory, so what is served is what was checked.
    ///
    /// A block whose bytes no longer match its sum is forgotten (in the index too) and the
    /// session ends: the next read opens a new one, which checks the whole file and fetches what
    /// is bad again. A block with no sum yet (being filled) is served as read.
    ///
    /// - Returns: the span, or `nil` when a block did not match (the caller reads on).
    func checkedStep(_ range: ByteRange, fromOrigin: Bool, originBytes: Int64) async throws -> ReadStep? {
        let length = machine.info.length
        let block = range.lowerBound / BlockChecksums.size
        let whole = BlockChecksums.range(of: block, length: length)
        let end = min(range.upperBound, whole.upperBound)
        let sums = (try? await index.checksums(of: record.id)) ?? [:]
        let checkable = sums[block] != nil && machine.recorded.contains(whole)
        let read = checkable ? whole : ByteRange(range.lowerBound, end)
        var bytes = [UInt8](repeating: 0, count: Int(read.count))
        let count = try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: read.lowerBound) }
        guard count == bytes.count else { throw CancellationError() }
        if checkable, let sum = sums[block] {
            let actual = bytes.withUnsafeBytes { BlockChecksums.checksum($0, by: sum.algorithm) }
            guard actual == sum.value else {
                logger.warning(
                    "cached bytes changed behind the cache's back while open; fetching them again",
                    metadata: ["key": "\(key)", "block": "\(block)"]
                )
                try? await index.forget(blocks: [block], of: record.id, length: length, state: nil)
                machine.replacementFailed(StreamCacheError(.storage, "the cache file changed behind the cache's back"))
                wakeAll()
                return nil
            }
        }
        let start = Int(range.lowerBound - read.lowerBound)
        let slice = bytes[start..<start + Int(end - range.lowerBound)]
        return .memory(slice, offset: range.lowerBound, fromOrigin: fromOrigin, originBytes: originBytes)
    }
}
