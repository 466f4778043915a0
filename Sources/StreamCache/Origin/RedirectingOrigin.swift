import Foundation

/// An ``OriginClient`` under the engine's rules of where requests may go.
///
/// Every URL is checked before anything is sent to it (``OriginURLRules``, then the
/// configuration's own refusals, such as the proxy's own listener). Redirects are followed here,
/// not inside the client: at most ``CacheConfiguration/maxRedirects``, each target checked like
/// the first URL, each hop sent only the headers meant for it (``OriginHeaders``).
struct RedirectingOrigin: Sendable {
    let client: any OriginClient
    let configuration: CacheConfiguration

    /// Sends `request` to its URL, following redirects, and hands the final answer to `handle`.
    ///
    /// - Throws: ``StreamCacheError`` for a refused URL or redirect target, too many redirects,
    ///   a transport error, or what `handle` threw.
    func fetch<Result: Sendable>(
        _ request: OriginRequest,
        headers: OriginHeaders,
        _ handle: @Sendable (OriginResponseHead, OriginBody) async throws -> Result
    ) async throws -> Result {
        let first = request.url
        var hop = request
        for _ in 0...configuration.maxRedirects {
            try await check(hop.url, first: first)
            hop.headers = headers.fields(for: hop.url, firstURL: first)
            let url = hop.url
            let outcome: Hop<Result> = try await client.fetch(hop) { head, body in
                if let target = Self.redirectTarget(of: head, from: url) { return .redirect(target) }
                return .answer(try await handle(head, body))
            }
            switch outcome {
            case .answer(let result): return result
            case .redirect(let target): hop.url = target
            }
        }
        throw StreamCacheError(
            .tooManyRedirects,
            "origin \(first.originName): more than \(configuration.maxRedirects) redirects"
        )
    }

    private enum Hop<Result: Sendable>: Sendable {
        case answer(Result)
        case redirect(URL)
    }

    /// Where a `301`/`302`/`303`/`307`/`308` with a `Location` points, resolved against `url`.
    static func redirectTarget(of head: OriginResponseHead, from url: URL) -> URL? {
        guard [301, 302, 303, 307, 308].contains(head.status),
            let location = head["Location"]?.trimmingCharacters(in: .whitespaces), !location.isEmpty,
            let target = URL(string: location, relativeTo: url)?.absoluteURL
        else { return nil }
        return target
    }

    /// Checks a hop: the first URL as the engine checks any URL it is given; a redirect target
    /// the same way, but a refusal there is the origin's fault (`refusedURL`).
    private func check(_ url: URL, first: URL) async throws {
        guard url != first else { return try await CacheEngine.validate(url, configuration: configuration) }
        do {
            try await CacheEngine.validate(url, configuration: configuration)
        } catch let error as StreamCacheError {
            throw StreamCacheError(
                .refusedURL,
                "origin \(first.originName) redirected to a URL that is not fetched: \(error.message)"
            )
        }
    }
}
