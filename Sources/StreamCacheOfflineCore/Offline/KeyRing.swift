import Foundation
import StreamCache

/// The AES-128 keys of one download, each read once through the streaming cache (where it stays,
/// pinned, so the stream as served also plays with the origin down) and then kept in memory.
package actor KeyRing {
    private let engine: CacheEngine
    private let headers: OriginHeaders
    private var keys: [String: Task<[UInt8], any Error>] = [:]

    package init(engine: CacheEngine, headers: OriginHeaders) {
        self.engine = engine
        self.headers = headers
    }

    /// The 16 bytes of the key at `url`.
    ///
    /// - Throws: ``OfflineError`` `segment` for a key of another size; what the cache throws.
    package func key(_ url: String) async throws -> [UInt8] {
        if let known = keys[url] {
            if let bytes = try? await known.value { return bytes }
        }
        let task = Task { [engine, headers] in try await Self.fetch(url, engine: engine, headers: headers) }
        keys[url] = task
        return try await task.value
    }

    private static func fetch(_ url: String, engine: CacheEngine, headers: OriginHeaders) async throws -> [UInt8] {
        guard let parsed = URL(string: url) else { throw OfflineError(.segment, "invalid key URL \(url)") }
        let resource = try await engine.open(parsed, originHeaders: headers)
        try await engine.setPinned(true, parsed)
        var bytes: [UInt8] = []
        for try await chunk in resource.read() {
            bytes += chunk
            if bytes.count > 16 { break }
        }
        guard bytes.count == 16 else {
            throw OfflineError(
                .segment,
                "the key \(Credentials.redacted(url)) is not an AES-128 key (\(bytes.count < 17 ? "\(bytes.count)" : "more than 16") bytes, not 16)"
            )
        }
        return bytes
    }
}
