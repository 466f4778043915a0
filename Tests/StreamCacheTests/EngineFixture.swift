import Foundation
import StreamCache
import StreamCacheHTTP
import StreamCacheTesting
import Testing

/// An origin, an HTTP client and a cache directory for one engine test.
struct EngineFixture {
    let origin: TestOrigin
    let client: HTTPOriginClient
    let directory: CacheDirectory

    static func make(conditions: OriginConditions = OriginConditions()) async throws -> EngineFixture {
        EngineFixture(
            origin: try await TestOrigin(conditions: conditions),
            client: HTTPOriginClient(readTimeout: .seconds(30)),
            directory: CacheDirectory(path: TestData.temporaryDirectory("engine"))
        )
    }

    func engine(_ configure: (inout CacheConfiguration) -> Void = { _ in }) throws -> CacheEngine {
        var configuration = CacheConfiguration()
        configure(&configuration)
        return try CacheEngine(directory: directory, origin: client, configuration: configuration)
    }

    func tearDown() async {
        try? await client.shutdown()
        await origin.shutdown()
        try? FileManager.default.removeItem(atPath: directory.path)
    }
}

/// Reads `[offset, offset + length)` of `url` through `engine` into memory.
func readAll(_ engine: CacheEngine, _ url: URL, offset: Int64 = 0, length: Int64? = nil) async throws -> [UInt8] {
    var bytes: [UInt8] = []
    for try await chunk in try await engine.read(url, offset: offset, length: length) { bytes += chunk }
    return bytes
}

func slice(_ data: [UInt8], _ offset: Int, _ length: Int) -> [UInt8] {
    Array(data[offset..<min(data.count, offset + length)])
}
