/// The chunks a session's fetches wrote last, kept in memory so that a reader at the edge of a
/// fetch gets them without reading the cache file back. The session keeps a chunk only if a
/// reader waits for its bytes, and forgets them all once none does: 200 players each behind its
/// own fetch would otherwise hold 1 MiB apiece for nobody.
///
/// Each chunk holds the bytes written at its offset in the cache file of version `generation`;
/// bytes in the file never change within a version, so a chunk is as good as the file until the
/// version changes.
struct RecentBytes {
    private struct Chunk {
        let offset: Int64
        let bytes: [UInt8]
        let generation: Int

        var end: Int64 { offset + Int64(bytes.count) }
    }

    /// How many bytes are kept at most; the oldest chunks go first.
    let limit: Int
    private var chunks: [Chunk] = []
    private var total = 0

    init(limit: Int) {
        self.limit = limit
    }

    /// Keeps `bytes`, just written at `offset` of version `generation`.
    mutating func add(_ bytes: [UInt8], at offset: Int64, generation: Int) {
        guard !bytes.isEmpty, bytes.count <= limit else { return }
        chunks.append(Chunk(offset: offset, bytes: bytes, generation: generation))
        total += bytes.count
        var dropped = 0
        while total > limit {
            total -= chunks[dropped].bytes.count
            dropped += 1
        }
        if dropped > 0 { chunks.removeFirst(dropped) }
    }

    /// The bytes of version `generation` from the start of `range` on, as far as one kept chunk
    /// and the range go; `nil` if no chunk holds the first byte.
    func bytes(startingAt range: ByteRange, generation: Int) -> ArraySlice<UInt8>? {
        // The newest chunk is the likeliest: readers wait at the edge of a fetch.
        for chunk in chunks.reversed()
        where chunk.generation == generation && chunk.offset <= range.lowerBound && range.lowerBound < chunk.end {
            let first = Int(range.lowerBound - chunk.offset)
            let last = Int(min(chunk.end, range.upperBound) - chunk.offset)
            return chunk.bytes[first..<last]
        }
        return nil
    }

    /// Forgets every chunk (the session moves to another file).
    mutating func removeAll() {
        chunks.removeAll()
        total = 0
    }
}
