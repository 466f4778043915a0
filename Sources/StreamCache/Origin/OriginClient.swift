import Foundation

/// Something that can send a ranged GET to an origin and stream the answer back.
///
/// Implementations do not follow redirects: a `3xx` is handed to `handle` like any answer, and
/// the engine follows it after checking the target. They never decode `Content-Encoding`, report
/// transport failures as ``StreamCacheError`` (`originUnreachable`, `originTimeout`), and stop the
/// transfer when the calling task is cancelled or `handle` returns before the body ends. They do
/// not judge status codes or ranges: the cache does.
public protocol OriginClient: Sendable {
    /// Sends `request` and hands the response head and body to `handle`.
    ///
    /// - Parameters:
    ///   - request: what to fetch.
    ///   - handle: reads as much of the body as it wants; the transfer ends when it returns.
    /// - Returns: what `handle` returned.
    /// - Throws: a transport error, or what `handle` threw.
    func fetch<Result: Sendable>(
        _ request: OriginRequest,
        _ handle: @Sendable (OriginResponseHead, OriginBody) async throws -> Result
    ) async throws -> Result
}
