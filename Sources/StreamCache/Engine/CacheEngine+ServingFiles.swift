import Foundation

/// Cached files handed to servers: a session's published file, or, with no session open, the
/// index's record of a fresh version, and fetches that bypass the cache.
extension CacheEngine {
    /// Sends `request` to its origin under the engine's rules (the URL and every redirect target
    /// checked, at most ``CacheConfiguration/maxRedirects`` hops, `headers` sent only where they
    /// belong) and hands the final answer to `handle`. Nothing is cached: for callers that keep
    /// the bytes themselves, such as an offline download.
    ///
    /// - Throws: ``StreamCacheError`` for a refused URL, too many redirects or a transport error,
    ///   or what `handle` threw.
    public nonisolated func fetchUncached<Result: Sendable>(
        _ request: OriginRequest,
        headers: OriginHeaders = OriginHeaders(),
        _ handle: @Sendable (OriginResponseHead, OriginBody) async throws -> Result
    ) async throws -> Result {
        try await environment.origin.fetch(request, headers: headers, handle)
    }

    /// What a server may send of `url` straight from the cache file, without a read (see
    /// ``ServableFile``); `nil` unless its session is open in this process and has said so.
    package nonisolated func publishedFile(_ url: URL) -> ServableFile? {
        publishedFile(key: configuration.cacheKey(url))
    }

    /// What a server may send of the resource with cache key `key` (``CacheConfiguration/key``).
    package nonisolated func publishedFile(key: String) -> ServableFile? {
        environment.published[key]
    }

    /// What a server may send of `key` when no session of this process says (``publishedFile(key:)``):
    /// the recorded bytes of a version that is fresh, varies on no request field, and whose file
    /// is as the index last saw it, read under a shared lock of its own. Anything else (stale,
    /// partly cached, changed behind the cache's back) is `nil`, for a session to decide.
    ///
    /// It opens no session, so a first touch of a cached resource costs an index read, an open
    /// and a lock, on the calling thread, and never waits (a server's event loop calls it). What
    /// it answers stays open for a second after its last use (``SessionlessFiles``), so the next
    /// ranges of the resource cost none of that.
    package nonisolated func sessionlessFile(key: String) -> ServableFile? {
        if let (kept, id) = sessionlessFiles.take(key) {
            environment.accessTimes.note(id)
            return kept
        }
        guard let (record, recorded) = index.resourceNow(forKey: key), let length = record.info.length, length > 0,
            !recorded.isEmpty, record.info.stored.vary.isEmpty, let seen = record.fileState,
            let freshUntil = ResourceSession.freshUntil(of: record.info, configuration: configuration),
            let (file, status) = CacheFile.openExistingLocked(path: directory.dataPath(id: record.id)),
            status.state == seen, !status.isUnlinked
        else { return nil }
        environment.accessTimes.note(record.id)
        let resource = ServableFile(
            file: file,
            info: record.info,
            written: recorded,
            freshUntil: freshUntil,
            tokenDigest: record.tokenDigest
        )
        sessionlessFiles.keep(resource, id: record.id, seen: seen, for: key)
        return resource
    }
}
