import Foundation

/// One resource opened in a ``CacheEngine``: its content information and its reads come from
/// one shared session, so asking what a resource is and then reading it costs one open and no
/// origin request beyond the bytes that are missing.
///
/// Keep it while you use the resource; the session stays open as long as a handle or one of its
/// streams exists.
public struct CachedResource: Sendable {
    let lease: SessionLease
    let configuration: CacheConfiguration

    /// The origin URL.
    public let url: URL

    /// What is known about the resource: length, type, validators, range support.
    ///
    /// From the cache when it is known there (revalidated with the origin when due), else from a
    /// `Range: bytes=0-1` request, as AVFoundation makes; those two bytes are cached.
    ///
    /// - Throws: ``StreamCacheError`` if the origin cannot say.
    public func info() async throws -> ContentInfo {
        var iterator = read(from: 0, length: 2).makeAsyncIterator()
        _ = try await iterator.nextChunk()
        return await lease.session.info
    }

    /// What is known about the resource once its length is: for an origin that sends none (a
    /// chunked answer), the resource is read to its end, into the cache, never guessed.
    ///
    /// - Parameter limit: the most bytes read to learn it; `nil` for no limit.
    /// - Throws: ``StreamCacheError`` as ``info()`` does, and `originProtocolViolation` once
    ///   `limit` bytes were read without an end (a live stream never ends).
    public func infoWithLength(readingAtMost limit: Int64? = nil) async throws -> ContentInfo {
        let known = try await info()
        guard known.length == nil else { return known }
        var read: Int64 = 0
        for try await chunk in self.read(from: 0) {
            read += Int64(chunk.count)
            if let limit, read > limit {
                throw StreamCacheError(
                    .originProtocolViolation,
                    "\(url.absoluteString) sends no length and had not ended after \(read) bytes"
                )
            }
        }
        return try await info()
    }

    /// Whether the cache serves a stale copy because the origin could not be reached to check it
    /// (RFC 9111 §4.2.4).
    public func isServedStale() async -> Bool {
        await lease.session.isServingStale
    }

    /// Whether every byte of the resource is in the cache.
    public func isComplete() async -> Bool {
        await lease.session.isComplete
    }

    /// Whether every byte of the resource is in the cache and fresh: a read asks the origin
    /// nothing (RFC 9111 §4.2).
    public func isCompleteAndFresh() async -> Bool {
        await lease.session.isCompleteAndFresh
    }

    /// Reads bytes `[offset, offset + length)` (`length == nil`: to the end), in order, as they
    /// become available.
    ///
    /// - Precondition: `offset >= 0`, `length >= 0` (checked by ``CacheEngine/read(_:offset:length:headers:)``).
    public func read(from offset: Int64 = 0, length: Int64? = nil) -> ByteStream {
        ByteStream(lease: lease, offset: offset, length: length, configuration: configuration)
    }

    /// Reads the resource as ``read(from:length:)`` does, after asking the origin whether the
    /// cached version is current, however recently it was confirmed: for what may change at any
    /// time, such as a live or multivariant playlist. The question is a conditional request
    /// (`If-None-Match`, else `If-Modified-Since`), so a current version costs the origin no
    /// body; a new one is fetched and cached; an unreachable origin leaves the cached bytes.
    public func revalidatedRead(from offset: Int64 = 0, length: Int64? = nil) -> ByteStream {
        var stream = ByteStream(lease: lease, offset: offset, length: length, configuration: configuration)
        stream.revalidates = true
        return stream
    }

    /// Reads the resource as ``read(from:length:)`` does, on a fetch of its own unless a fetch is
    /// about to bring the bytes: a fetch whose request asks for them from further back stops
    /// where this read starts. For a second connection on a file another reader is fetching
    /// slowly; what the other request has in flight past `offset` is sent twice.
    public func readAhead(from offset: Int64, length: Int64? = nil) -> ByteStream {
        var stream = ByteStream(lease: lease, offset: offset, length: length, configuration: configuration)
        stream.readsAhead = true
        return stream
    }
}
