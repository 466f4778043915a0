import Foundation
import StreamCache
import StreamCacheHTTP
import StreamCacheOfflineCore
import StreamCacheTesting
import Testing

/// A manifest read for a download or a live reload (``ManifestFetcher``) is checked with the
/// origin once a read, however little its answer says of its version.
@Suite struct ManifestFetcherTests {
    /// A live playlist without validators or freshness, as many packagers serve one: its first
    /// read asks the origin once, and so does a read after it changed, which brings the new
    /// playlist.
    @Test func aManifestWithoutValidatorsIsAskedForOnceARead() async throws {
        let origin = try await TestOrigin(conditions: OriginConditions(faults: [.noValidators]))
        let client = HTTPOriginClient(readTimeout: .seconds(30))
        let directory = CacheDirectory(path: TestData.temporaryDirectory("manifest-fetcher"))
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        let engine = try CacheEngine(directory: directory, origin: client, configuration: CacheConfiguration())
        let fetcher = ManifestFetcher(engine: engine, options: OfflineDownloadOptions())
        let first = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:1.0,\ns0.ts\n"
        origin.setResource(Array(first.utf8), at: "/live.m3u8")

        let read = try await fetcher.document(origin.url("/live.m3u8"))
        #expect(read.bytes == Array(first.utf8))
        #expect(read.kind != nil)
        #expect(origin.statistics.requests.count == 1, "\(origin.statistics.requests.map(\.range))")

        let second = first + "#EXTINF:1.0,\ns1.ts\n"
        origin.setResource(Array(second.utf8), at: "/live.m3u8")
        origin.resetStatistics()
        let reloaded = try await fetcher.document(origin.url("/live.m3u8"))
        #expect(reloaded.bytes == Array(second.utf8))
        // The check's answer is the new playlist: no second request for it.
        #expect(origin.statistics.requests.count == 1, "\(origin.statistics.requests.map(\.range))")

        await engine.shutdown()
        try await client.shutdown()
        await origin.shutdown()
    }
}
