import Foundation

extension ResourceSession {
    /// Sends `request` to the origin with the newest reader's headers. A `401` or `403` answer
    /// (a signed URL's token expired) is sent again once with a fresh URL of the key, when the
    /// app gives one (``CacheConfiguration/refreshURL``); otherwise it is thrown as it came.
    nonisolated func fetchFromOrigin<Result: Sendable>(
        _ request: OriginRequest,
        _ handle: @Sendable (OriginResponseHead, OriginBody) async throws -> Result
    ) async throws -> Result {
        do {
            return try await origin.fetch(request, headers: headers, handle)
        } catch let error as StreamCacheError where error.kind == .originStatus && [401, 403].contains(error.status) {
            guard let fresh = await freshURL(replacing: request.url) else { throw error }
            var again = request
            again.url = fresh
            return try await origin.fetch(again, headers: headers, handle)
        }
    }

    /// A URL of the key to use instead of `refused`: the newest reader's, if another reader or
    /// fetch has brought one since, else the app's answer (asked once per refused URL), which
    /// becomes the newest. `nil` if there is none, or it is of another key.
    nonisolated private func freshURL(replacing refused: URL) async -> URL? {
        let newest = newest.url
        if newest != refused { return newest }
        let configuration = environment.configuration
        guard let refresh = configuration.refreshURL, let fresh = await refresh(key, refused), fresh != refused,
            configuration.cacheKey(fresh) == key
        else { return nil }
        await opened(with: fresh, headers: headers)
        return fresh
    }
}
