import Foundation
import StreamCache

/// Fetches and parses playlists for an offline download, fresh from the origin, with the
/// download's retries.
struct PlaylistFetcher: Sendable {
    let engine: CacheEngine
    let options: OfflineDownloadOptions

    /// The most bytes a playlist may have.
    static let limit = 32 << 20

    /// - Throws: ``OfflineError`` `playlist` naming the URL.
    func playlist(_ url: URL) async throws -> Playlist {
        let bytes = try await text(url)
        do {
            return try Playlist(parsing: bytes, url: url.absoluteString)
        } catch {
            throw OfflineError(.playlist, "\(url.absoluteString) is not a usable playlist: \(error)")
        }
    }

    private func text(_ url: URL) async throws -> [UInt8] {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await engine.fetchUncached(OriginRequest(url: url), headers: options.headers) { head, body in
                    if head.status == 429 || head.status >= 500 {
                        throw RetryableStatus(status: head.status, retryAfter: nil)
                    }
                    _ = try OriginAnswer.judge(head, first: 0, last: nil)
                    guard head.status == 200 else {
                        throw StreamCacheError(.originProtocolViolation, "origin answered \(head.status)")
                    }
                    var bytes: [UInt8] = []
                    for try await chunk in body {
                        bytes += chunk
                        guard bytes.count <= Self.limit else {
                            throw OfflineError(.playlist, "\(url.absoluteString) is larger than a playlist can be")
                        }
                    }
                    return bytes
                }
            } catch {
                if Task.isCancelled { throw CancellationError() }
                guard let pause = ItemFetcher.retryDelay(error, attempt: attempt, backoff: options.retryBackoff),
                    attempt < options.maxAttempts
                else {
                    throw OfflineError(
                        .playlist,
                        "cannot fetch playlist \(url.absoluteString): \(ItemFetcher.reason(for: error))"
                    )
                }
                try await Task.sleep(for: pause)
            }
        }
    }
}
