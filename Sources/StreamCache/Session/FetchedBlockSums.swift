/// The checksums of whole blocks a session's fetches wrote, summed from the bytes as they were
/// written, so recording a block does not read it back from the cache file
/// (``BlockChecksums``). Each fetch writes in order; a block it writes only part of (it started
/// or stopped inside it, or the block ends the resource short of a whole block) is left to be
/// read back.
struct FetchedBlockSums {
    /// The block each fetch is summing, by fetch.
    private var running: [Int: BlockChecksums.RunningSum] = [:]
    /// Sums of blocks written whole and not yet taken.
    private var finished: [Int64: UInt64] = [:]
    /// The version whose file the sums are of.
    private var generation: Int?

    /// Where fetch `fetch` of version `generation` left its summing: its block in progress, to
    /// go on from in ``FetchSums/add(_:at:)`` beside its next write.
    func progress(of fetch: Int, generation: Int) -> FetchSums {
        FetchSums(running: generation == self.generation ? running[fetch] : nil)
    }

    /// Keeps what fetch `fetch` summed as it wrote bytes of the file of version `generation`.
    mutating func wrote(_ sums: FetchSums, fetch: Int, generation: Int) {
        if generation != self.generation { forget(generation: generation) }
        running[fetch] = sums.running
        finished.merge(sums.finished) { _, new in new }
    }

    /// Takes the sums of `blocks` of version `generation` that were summed as written.
    mutating func take(_ blocks: [Int64], generation: Int) -> [Int64: UInt64] {
        guard generation == self.generation else { return [:] }
        var taken: [Int64: UInt64] = [:]
        for block in blocks {
            if let sum = finished.removeValue(forKey: block) { taken[block] = sum }
        }
        return taken
    }

    /// Forgets fetch `fetch`'s block in progress (the fetch ended).
    mutating func fetchEnded(_ fetch: Int) {
        running[fetch] = nil
    }

    /// Forgets every sum (no fetch runs, or the session moves to the file of `generation`).
    mutating func forget(generation: Int? = nil) {
        running.removeAll()
        finished.removeAll()
        self.generation = generation
    }
}

/// One fetch's summing as it writes, carried to the thread that writes (where the bytes are in
/// the processor's cache) and back: its block in progress, and the blocks it finished.
struct FetchSums: Sendable {
    var running: BlockChecksums.RunningSum?
    var finished: [Int64: UInt64] = [:]

    /// Adds `bytes`, just written at `offset`: a block is summed only from its first byte on, in
    /// order.
    mutating func add(_ bytes: UnsafeRawBufferPointer, at offset: Int64) {
        let size = BlockChecksums.size
        var position = offset
        var rest = bytes
        while !rest.isEmpty {
            var sum = running.flatMap { $0.position == position ? $0 : nil }
            if sum == nil, position % size == 0 { sum = BlockChecksums.RunningSum(block: position / size) }
            let blockEnd = (position / size + 1) * size
            let count = Int(min(Int64(rest.count), blockEnd - position))
            running = nil
            if var sum {
                sum.add(UnsafeRawBufferPointer(rebasing: rest[..<count]))
                if let value = sum.sum { finished[sum.block] = value } else { running = sum }
            }
            position += Int64(count)
            rest = UnsafeRawBufferPointer(rebasing: rest[count...])
        }
    }
}
