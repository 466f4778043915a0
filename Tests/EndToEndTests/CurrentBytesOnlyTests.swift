import Foundation
import StreamCache
import StreamCacheHTTP
import StreamCacheOffline
import StreamCacheTesting
import Testing

/// A file a live recording fetches must be the origin's current one: when the origin cannot be
/// reached to check the cached copy of a name it reuses (and sends no validators), the file is
/// not written with the older bytes a player would get then; the fetch fails, to be tried again.
@Suite(.timeLimit(.minutes(2))) struct CurrentBytesOnlyTests {
    @Test func aRecycledNameTheOriginCannotConfirmIsNotWrittenWithItsOlderBytes() async throws {
        let folder = TestData.temporaryDirectory("current-bytes")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/package", withIntermediateDirectories: true)
        let origin = try await TestOrigin(conditions: OriginConditions(faults: [.noValidators]))
        let client = HTTPOriginClient(readTimeout: .seconds(10))
        let engine = try CacheEngine(directory: CacheDirectory(path: folder + "/cache"), origin: client)
        let older = [UInt8](repeating: 1, count: 20_000)
        origin.setResource(older, at: "/r0.ts")
        var options = OfflineDownloadOptions()
        options.maxAttempts = 2
        options.retryBackoff = .milliseconds(10)
        let fetcher = ItemFetcher(engine: engine, options: options, folder: folder + "/package", revalidates: true)
        func item(_ path: String) -> ItemFetcher.Entry {
            (
                index: 0,
                item: PackageItem(
                    kind: .segment,
                    rendition: 0,
                    path: path,
                    url: origin.url("/r0.ts").absoluteString,
                    start: 0,
                    duration: 1
                )
            )
        }
        try await fetcher.fetch([item("first.ts")]) { _, _ in }
        #expect(FileManager.default.contents(atPath: folder + "/package/first.ts") == Data(older))

        // The name now holds a newer segment, and the origin fails every request.
        origin.setResource([UInt8](repeating: 2, count: 20_000), at: "/r0.ts")
        origin.setConditions(OriginConditions(faults: [.noValidators, .status(503)]))
        await #expect(throws: OfflineError.self) {
            try await fetcher.fetch([item("second.ts")]) { _, _ in }
        }
        #expect(FileManager.default.contents(atPath: folder + "/package/second.ts") == nil)
        await engine.shutdown()
        try? await client.shutdown()
        await origin.shutdown()
    }
}
