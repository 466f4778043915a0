import Foundation
import NIOCore
import StreamCache

/// A read of the cache engine whose first chunk has been awaited, so the origin has said what the
/// resource is (length, type, validators) before the response head is written.
final class StartedRead: @unchecked Sendable {
    // Used by one request task at a time: created, then streamed once.
    let offset: Int64
    /// How many bytes the read is for; `nil`: to the end.
    let length: Int64?
    /// Whether the cached bytes it reads were checked with the origin first.
    let revalidated: Bool
    private let bytes: ByteStream
    private var iterator: ByteStream.Iterator
    private var first: CachedChunk?

    init(_ resource: CachedResource, offset: Int64, length: Int64?, revalidating: Bool = false) async throws {
        try CacheEngine.validateRange(offset: offset, length: length)
        self.offset = offset
        self.length = length
        revalidated = revalidating
        var bytes =
            revalidating
            ? resource.revalidatedRead(from: offset, length: length) : resource.read(from: offset, length: length)
        // What a fetch has just written goes to the client by `sendfile` from the page cache.
        bytes.prefersFileSpans = true
        self.bytes = bytes
        iterator = bytes.makeAsyncIterator()
        first = try await iterator.nextChunk()
    }

    /// Whether the read yields exactly the bytes of `range` (`nil`: the whole resource, its
    /// length unknown).
    func reads(_ range: ByteRange?) -> Bool {
        guard let range else { return offset == 0 && length == nil }
        guard offset == range.lowerBound else { return false }
        // A read past the end stops at the end, where a range resolved against the length stops too.
        return length.map { offset + $0 >= range.upperBound } ?? true
    }

    /// What the engine knows about the resource now.
    var info: ContentInfo {
        get async { await bytes.currentInfo() }
    }

    /// The whole read as one buffer when its first chunk is all of it (`count` bytes), so a small
    /// answer goes out with its head in one write; `nil` otherwise, and the read is untouched.
    func whole(count: Int64, allocator: ByteBufferAllocator, exchange: inout Exchange) throws -> ByteBuffer? {
        guard let chunk = first, Int64(chunk.count) == count else { return nil }
        first = nil
        let buffer = try chunk.buffer(allocator: allocator)
        exchange.delivered(chunk)
        return buffer
    }

    /// Hands every chunk of the read to `write`, as it becomes available, counting in `exchange`
    /// where the bytes came from.
    func stream(
        allocator: ByteBufferAllocator,
        exchange: inout Exchange,
        write: (ByteBuffer) async throws -> Void
    ) async throws {
        try await forEachChunk(exchange: &exchange) { try await write($0.buffer(allocator: allocator)) }
    }

    /// Hands every chunk of the read to `writer` as it becomes available (spans of the cache file
    /// by `sendfile`), counting in `exchange` where the bytes came from.
    func stream(into writer: ResponseBodyWriter, allocator: ByteBufferAllocator, exchange: inout Exchange) async throws
    {
        try await forEachChunk(exchange: &exchange) { try await writer.write($0, allocator: allocator) }
    }

    /// Hands every chunk of the read to `body` as it becomes available, then counts it.
    private func forEachChunk(exchange: inout Exchange, _ body: (CachedChunk) async throws -> Void) async throws {
        var next = first
        first = nil
        if next == nil { next = try await iterator.nextChunk() }
        while let chunk = next {
            try await body(chunk)
            exchange.delivered(chunk)
            next = try await iterator.nextChunk()
        }
    }
}

extension CachedChunk {
    /// The bytes, read from the cache file (or copied from memory) into a new buffer.
    func buffer(allocator: ByteBufferAllocator) throws -> ByteBuffer {
        var buffer = allocator.buffer(capacity: count)
        try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
            try read(into: pointer)
            return count
        }
        return buffer
    }
}
