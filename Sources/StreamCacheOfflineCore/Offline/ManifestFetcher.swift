import Foundation
import StreamCache

/// Fetches manifests (playlists, MPDs) for an offline download, through the streaming cache and
/// checked with the origin, with the download's retries.
package struct ManifestFetcher: Sendable {
    package let engine: CacheEngine
    package let options: OfflineDownloadOptions

    /// The most bytes a manifest may have (``ManifestKind/largestDocument``).
    package static let limit = ManifestKind.largestDocument

    /// A manifest of any format: its bytes and the kind its media
    /// type, bytes and path say it is (``ManifestKind``), `nil` when none says so.
    package func document(_ url: URL) async throws -> (bytes: [UInt8], kind: ManifestKind?) {
        try await text(url)
    }

    /// The manifest's bytes through the streaming cache, checked with the origin first (a
    /// conditional request: a current one costs no body), so the cache holds what the download
    /// was planned from and `serve` can play it with the origin down.
    private func text(_ url: URL) async throws -> (bytes: [UInt8], kind: ManifestKind?) {
        var attempt = 0
        while true {
            attempt += 1
            do {
                let resource = try await engine.open(url, originHeaders: options.headers)
                let reading = resource.revalidatedRead()
                var bytes: [UInt8] = []
                for try await chunk in reading {
                    bytes += chunk
                    guard bytes.count <= Self.limit else {
                        throw OfflineError(.manifest, "\(url.absoluteString) is larger than a manifest can be")
                    }
                }
                // The type the read's answer gave: another read would check the version again,
                // a request more for a manifest without validators.
                let kind = ManifestKind.of(
                    url: url,
                    contentType: await reading.currentInfo().contentType,
                    firstBytes: bytes
                )
                return (bytes, kind)
            } catch {
                if Task.isCancelled { throw CancellationError() }
                guard let pause = ItemFetcher.retryDelay(error, attempt: attempt, backoff: options.retryBackoff),
                    attempt < options.maxAttempts
                else {
                    throw OfflineError(
                        .manifest,
                        "cannot fetch manifest \(url.absoluteString): \(ItemFetcher.reason(for: error))",
                        cause: error
                    )
                }
                try await Task.sleep(for: pause)
            }
        }
    }

    package init(
        engine: CacheEngine,
        options: OfflineDownloadOptions
    ) {
        self.engine = engine
        self.options = options
    }
}
