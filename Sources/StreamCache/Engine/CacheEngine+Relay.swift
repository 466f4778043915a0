import Foundation

extension CacheEngine {
    /// Sends a request of a method the cache does not answer itself (anything but `GET` and
    /// `HEAD`: a licence request's `POST`, a `PUT`, a `DELETE`) to its origin as it came, and
    /// hands the answer to `handle`; nothing of it is stored. A redirect is not followed: it is
    /// the player's to follow.
    ///
    /// An answer that is not an error, to a method that is not safe (RFC 9110 §9.2.1), marks
    /// what the cache holds of the URL stale, and of the `Location` and `Content-Location` it
    /// names on the same host (RFC 9111 §4.4): the next read of each asks the origin first.
    ///
    /// - Throws: ``StreamCacheError`` for a refused URL or a transport error, or what `handle`
    ///   threw.
    /// - Parameter client: the client to send it with, if not the engine's (connections of its
    ///   own).
    package func relay<Result: Sendable>(
        _ request: OriginRequest,
        through client: (any OriginClient)? = nil,
        _ handle: @Sendable (OriginResponseHead, OriginBody) async throws -> Result
    ) async throws -> Result {
        try await Self.validate(request.url, configuration: configuration)
        return try await (client ?? environment.origin.client).fetch(request) { head, body in
            if Self.invalidates(method: request.method, status: head.status) {
                await self.invalidate(Self.namedURLs(of: head, for: request.url))
            }
            return try await handle(head, body)
        }
    }

    /// Whether an answer of `status` to `method` changed what the cache holds of its target.
    nonisolated static func invalidates(method: String, status: Int) -> Bool {
        let safe: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]
        return !safe.contains(method.uppercased()) && (200..<400).contains(status)
    }

    /// The target and what the answer's `Location` and `Content-Location` name on its host.
    nonisolated static func namedURLs(of head: OriginResponseHead, for url: URL) -> [URL] {
        let named = ["Location", "Content-Location"].compactMap { name in
            head[name].flatMap { URL(string: $0.trimmingCharacters(in: .whitespaces), relativeTo: url)?.absoluteURL }
        }
        return [url] + named.filter { $0.host?.lowercased() == url.host?.lowercased() && $0.port == url.port }
    }

    /// Marks what the cache holds of each of `urls` stale: in its open session, in the index (for
    /// every process) and in the files kept open for the cache hits.
    package func invalidate(_ urls: [URL]) async {
        for url in urls {
            let key = configuration.cacheKey(url)
            sessionlessFiles.remove(key)
            if case .open(let session) = sessions.state(key) {
                await session.invalidate()
            } else {
                _ = try? await index.invalidate(key: key)
            }
        }
    }
}
